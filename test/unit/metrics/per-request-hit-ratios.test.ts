import { describe, expect, test } from "bun:test";
import { perRequestHitRatios } from "../../../src/metrics/per-request-hit-ratios.ts";
import { makeRecord } from "../../helpers/record.ts";

const rec = (index: number, promptLen: number, cachedTokens: number, ok = true) => makeRecord({ index, ok, promptLen, cachedTokens });

describe("perRequestHitRatios: each request's own range over the prompt tokens that reported", () => {
  test("failed and unreported requests count nowhere; an unjudged one only in the denominator", () => {
    const records = [rec(0, 100, 64), rec(1, 200, 128), rec(2, 300, 0, false), rec(3, 400, -1), rec(4, 500, 256)];
    const ranges = new Map<number, readonly [number, number]>([
      [0, [32, 96]],
      [1, [128, 192]],
      [2, [64, 64]],
      [3, [64, 64]],
    ]);
    const r = perRequestHitRatios(records, (i) => ranges.get(i) ?? null);
    // Reported: requests 0, 1 and 4 (800 prompt tokens); 4 has no range.
    expect(r.expected).toBe((32 + 128) / 800);
    expect(r.observed).toBe((64 + 128) / 800);
  });

  test("no request reported: observed is null, expected 0", () => {
    const r = perRequestHitRatios([rec(0, 100, -1), rec(1, 100, 5, false)], () => [10, 20]);
    expect(r).toEqual({ expected: 0, observed: null });
  });
});
