/**
 * The cost model judged: the TTFT model (fixed + slope x uncached tokens) of each run, refitted from its lines'
 * `ttft_fit` moments, compared term by term with an interval: the least-squares errors for single runs, Welch's over
 * each repeat's own fit with repeats. A 20 % costlier prefill token fails where mean TTFT moves less than its limit.
 */
import { describe, expect, test } from "bun:test";
import { judgeCostModel } from "../../../src/compare/cost-model.ts";
import { parseLimits } from "../../../src/compare/limits.ts";
import type { CompareLine } from "../../../src/compare/lines.ts";
import { lineFitErrors } from "../../../src/metrics/intervals.ts";
import { ttftMoments } from "../../../src/metrics/ttft-model.ts";

/** A deterministic ±1 ms wobble. */
const wobble = (i: number, seed: number) => Math.sin(i * 12.9898 + seed * 78.233) * 1;

/**
 * A sweep line at `pct` of 16 requests of 2000 tokens: TTFT = fixedMs + usPerToken x uncached, plus the wobble, plus
 * `shiftMs` for the whole line (the box slower while it ran).
 */
function line(pct: number, fixedMs: number, usPerToken: number, seed: number, repeat?: number, shiftMs = 0): CompareLine {
  const uncached = Math.round(2000 * (1 - pct / 100));
  const x = Array.from({ length: 16 }, () => uncached);
  const y = x.map((u, i) => fixedMs + (usPerToken * u) / 1000 + wobble(i, seed + pct) + shiftMs);
  return {
    shared_prefix_pct: pct,
    workload: { seed: "42" },
    ttft_fit: ttftMoments(x, y),
    ...(repeat === undefined ? {} : { repeat }),
  } as unknown as CompareLine;
}

const SIX = [0, 20, 40, 60, 80, 90];
const run = (usPerToken: number, seed: number, repeats?: number, pcts = SIX): CompareLine[] =>
  repeats === undefined
    ? pcts.map((pct) => line(pct, 50, usPerToken, seed))
    : pcts.flatMap((pct) => Array.from({ length: repeats }, (_, r) => line(pct, 50, usPerToken, seed + 10 * r, r)));

const DEFAULTS = parseLimits("ttft_model_fixed_ms=10%,ttft_model_prefill_us_per_token=10%");
const rowOf = (rows: ReturnType<typeof judgeCostModel>, name: string) => rows.find((r) => r.metric === name)!;

describe("lineFitErrors", () => {
  test("points on a line have no error; the slope's error is s / sqrt(Sxx)", () => {
    const exact = lineFitErrors({ n: 4, meanX: 2.5, meanY: 6, m2X: 5, m2Y: 20, cXY: 10 })!;
    expect(exact.slope).toBe(2);
    expect(exact.intercept).toBe(1);
    expect(exact.slopeSe).toBe(0);
    // x = 1,2,3,4; y = 1,3,2,4: Sxx 5, Sxy 4, Syy 5; SSE = 5 - 16/5 = 1.8; s² = 0.9.
    const f = lineFitErrors({ n: 4, meanX: 2.5, meanY: 2.5, m2X: 5, m2Y: 5, cXY: 4 })!;
    expect(f.slope).toBeCloseTo(0.8, 12);
    expect(f.slopeSe).toBeCloseTo(Math.sqrt(0.9 / 5), 12);
    expect(f.interceptSe).toBeCloseTo(Math.sqrt(0.9 * (1 / 4 + 6.25 / 5)), 12);
    expect(lineFitErrors({ n: 4, meanX: 2, meanY: 2, m2X: 0, m2Y: 1, cXY: 0 })).toBeNull();
  });
});

describe("judgeCostModel", () => {
  test("single runs: 24 instead of 20 µs per token is REGRESSED on the slope; the fixed overhead is not", () => {
    const rows = judgeCostModel(run(20, 1), run(24, 2), DEFAULTS, null);
    const slope = rowOf(rows, "ttft_model_prefill_us_per_token");
    expect(slope.base!).toBeCloseTo(20, 0);
    expect(slope.next!).toBeCloseTo(24, 0);
    expect(slope.ciPct![0]).toBeGreaterThan(10);
    expect(slope.verdict).toBe("REGRESSED");
    expect(slope.repeats).toBeUndefined();
    expect(slope.label).toBe("90%");
    expect(["same", "ok", "better"]).toContain(rowOf(rows, "ttft_model_fixed_ms").verdict);
  });

  test("two runs of one server are not REGRESSED", () => {
    const rows = judgeCostModel(run(20, 1), run(20, 2), DEFAULTS, null);
    for (const r of rows) expect(r.verdict).not.toBe("REGRESSED");
  });

  test("a whole line slower by 3 ms: the line means' errors widen the interval, the requests' alone would not", () => {
    // NEW's 0 % line ran while the box was busy: its slope reads ~8 % high on requests that agree with each other.
    const shifted = SIX.map((pct) => line(pct, 50, 20, 2, undefined, pct === 0 ? 3 : pct === 90 ? -1.5 : 0));
    const slope = rowOf(judgeCostModel(run(20, 1), shifted, parseLimits("ttft_model_prefill_us_per_token=5%"), null), "ttft_model_prefill_us_per_token");
    expect(slope.deltaPct!).toBeGreaterThan(5);
    expect(slope.ciPct![0]).toBeLessThan(5);
    expect(slope.verdict).toBe("noisy");
  });

  test("two lines a side fit exactly, so their line-level noise is unknown: a change past the limit is noisy", () => {
    const rows = judgeCostModel(run(20, 1, undefined, [0, 90]), run(24, 2, undefined, [0, 90]), DEFAULTS, null);
    const slope = rowOf(rows, "ttft_model_prefill_us_per_token");
    expect(slope.ciPct![0]).toBeGreaterThan(10);
    expect(slope.verdict).toBe("noisy");
  });

  test("with repeats: Welch's interval over each repeat's own fit", () => {
    const rows = judgeCostModel(run(20, 1, 3, [0, 90]), run(24, 2, 3, [0, 90]), DEFAULTS, null);
    const slope = rowOf(rows, "ttft_model_prefill_us_per_token");
    expect(slope.repeats).toEqual([3, 3]);
    expect(slope.verdict).toBe("REGRESSED");
  });

  test("one pct (no spread of uncached tokens) gives no model and no rows; --only narrows them", () => {
    expect(judgeCostModel([line(50, 50, 20, 1)], [line(50, 50, 24, 2)], DEFAULTS, null)).toEqual([]);
    const only = judgeCostModel(run(20, 1), run(24, 2), DEFAULTS, ["ttft_model_fixed_ms"]);
    expect(only.map((r) => r.metric)).toEqual(["ttft_model_fixed_ms"]);
  });
});
