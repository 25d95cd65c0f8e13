import { describe, expect, test } from "bun:test";
import { parseLimits, parseOnly } from "../../../src/compare/limits.ts";
import { compareMetric } from "../../../src/compare/metrics.ts";

describe("compare's limits", () => {
  test("a metric is named once, and --only takes the names compare knows", () => {
    expect([...parseLimits("p99_ttft_ms=10%,mean_itl_ms=5%")]).toEqual([
      ["p99_ttft_ms", 10],
      ["mean_itl_ms", 5],
    ]);
    expect(parseOnly("p99_ttft_ms,output_throughput")).toEqual(["p99_ttft_ms", "output_throughput"]);
    expect(() => parseLimits("p99_ttft_ms=10%,p99_ttft_ms=5%")).toThrow(/p99_ttft_ms is named twice/);
    // --max-regress given twice: its values arrive on separate lines, and add up.
    expect([...parseLimits("p99_ttft_ms=10%\nmean_itl_ms=5%")].length).toBe(2);
    expect(() => parseLimits("mean_itl_ms=5%\nmean_itl_ms=10%")).toThrow(/mean_itl_ms is named twice/);
  });

  test("a value without its percent sign, or a metric compare does not know, is refused naming it", () => {
    expect(() => parseLimits("p99_ttft_ms=10")).toThrow(/write the percent sign/);
    expect(() => parseLimits("p99_nothing_ms=10%")).toThrow(/compare knows no metric p99_nothing_ms/);
  });
});

describe("limits on every key a gate may name, each named once in either form", () => {
  test("a metric named twice is refused whichever way its name is written", () => {
    expect(() => parseLimits("ttft_from_intended_p99_ms=10%,p99_ttft_from_intended_ms=5%")).toThrow(/ttft_from_intended_p99_ms is named twice/);
    expect(() => parseLimits("p99_ttft_from_intended_ms=10%\nttft_from_intended_p99_ms=5%")).toThrow(/ttft_from_intended_p99_ms is named twice/);
    expect(() => parseOnly("ttft_from_intended_p99_ms,p99_ttft_from_intended_ms")).toThrow(/ttft_from_intended_p99_ms is named twice/);
  });

  test("the latencies from the intended send, the ledger's losses and the fidelity counts take a limit (0.4: 'compare knows no metric')", () => {
    const names = [
      "ttft_from_intended_p99_ms",
      "e2e_from_intended_mean_ms",
      "loss_routing_ratio",
      "loss_engine_ratio",
      "fidelity_diverged",
      "observed_hit_ratio",
    ];
    expect([...parseLimits(names.map((n) => `${n}=10%`).join(","))].map(([n]) => n)).toEqual(names);
    expect(compareMetric("ttft_from_intended_p99_ms")).toMatchObject({ better: "lower", shown: false });
    expect(compareMetric("loss_routing_ratio")).toMatchObject({ better: "lower", shown: false });
    expect(compareMetric("fidelity_diverged")).toMatchObject({ better: "lower", shown: false });
    expect(compareMetric("observed_hit_ratio")).toMatchObject({ better: "higher", shown: false });
    // A key of the workload's shape has no better side: no limit.
    expect(() => parseLimits("total_tokens=10%")).toThrow(/compare knows no metric total_tokens/);
  });
});
