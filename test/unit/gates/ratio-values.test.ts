/**
 * One convention for relative values: a gate's value is in its key's unit, and a share (a hit ratio, a loss ratio)
 * may be written as the fraction the key holds or with its percent sign, as every flag takes a relative value. A share
 * outside [0, 1] is refused: `observed_hit_ratio>=45` could never pass (0.4 accepted it).
 */
import { describe, expect, test } from "bun:test";
import { parseGate } from "../../../src/gates/parse.ts";

describe("a gate on a share", () => {
  test("takes a fraction or a percent, the same value either way", () => {
    expect(parseGate("observed_hit_ratio>=45%")).toMatchObject({ expr: "observed_hit_ratio>=45%", metric: "observed_hit_ratio", value: 0.45 });
    expect(parseGate("observed_hit_ratio>=0.45").value).toBe(0.45);
    expect(parseGate("loss_routing_ratio<=5%@pct>=50")).toMatchObject({ value: 0.05, scope: [{ axis: "shared_prefix_pct", op: ">=", value: 50 }] });
    expect(parseGate("loss_routing_ratio<=0.05").value).toBe(0.05);
  });

  test("outside [0, 1] is refused, naming the key and both ways to write it", () => {
    expect(() => parseGate("observed_hit_ratio>=45")).toThrow(
      "observed_hit_ratio is a share in [0, 1] (0% to 100%), so 45 can never be its value (45% is 0.45): write a fraction or a percent, e.g. 0.45 or 45%",
    );
    expect(() => parseGate("server_cache_hit_rate>=120%")).toThrow(/server_cache_hit_rate is a share in \[0, 1\].*120%/);
    expect(() => parseGate("loss_engine_ratio<=-0.1")).toThrow(/loss_engine_ratio is a share/);
  });

  test("a ratio that is not a share keeps its own range; a percent sign on a key that is no ratio is refused", () => {
    expect(parseGate("routing_imbalance<=1.5").value).toBe(1.5);
    expect(() => parseGate("p99_ttft_ms<=5%")).toThrow("p99_ttft_ms is in ms, not a ratio: write its value without a percent sign");
  });
});
