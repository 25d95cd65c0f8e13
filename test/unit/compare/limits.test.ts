import { describe, expect, test } from "bun:test";
import { parseLimits, parseOnly } from "../../../src/compare/limits.ts";

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
