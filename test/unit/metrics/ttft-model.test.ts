import { describe, expect, test } from "bun:test";
import { fitFromMoments, fitTtftModel, mergeTtftMoments, ttftMoments } from "../../../src/metrics/ttft-model.ts";
import { renderTtftFit } from "../../../src/report/console.ts";

describe("fitTtftModel", () => {
  test("recovers intercept and slope of exact data", () => {
    const x = [0, 1000, 7000, 35000, 70000];
    const y = x.map((u) => 12 + u * 0.0025); // 12 ms + 2.5 µs/token
    const fit = fitTtftModel(x, y)!;
    expect(fit.n).toBe(5);
    expect(fit.fixed_ms).toBeCloseTo(12, 9);
    expect(fit.prefill_us_per_token).toBeCloseTo(2.5, 9);
    expect(fit.saved_us_per_cached_token).toBeCloseTo(2.5, 9);
    expect(fit.r2).toBeCloseTo(1, 12);
  });

  test("noisy data: R² below 1, slope near the truth", () => {
    const x: number[] = [];
    const y: number[] = [];
    for (let i = 0; i < 200; i++) {
      const u = (i % 10) * 7000;
      x.push(u);
      y.push(5 + u * 0.002 + ((i * 7919) % 13) / 13 - 0.5);
    }
    const fit = fitTtftModel(x, y)!;
    expect(fit.prefill_us_per_token).toBeGreaterThan(1.95);
    expect(fit.prefill_us_per_token).toBeLessThan(2.05);
    expect(fit.r2!).toBeLessThan(1);
    expect(fit.r2!).toBeGreaterThan(0.99);
  });

  test("no slope without two distinct x values", () => {
    expect(fitTtftModel([5], [1])).toBeNull();
    expect(fitTtftModel([5, 5, 5], [1, 2, 3])).toBeNull();
    expect(() => fitTtftModel([1, 2], [1])).toThrow(RangeError);
  });

  test("moments merged pct by pct give the fit of all the points (what `report` recomputes from the file)", () => {
    const x: number[] = [];
    const y: number[] = [];
    let merged = null;
    for (const [k, uncached] of [70000, 35000, 7000, 700, 70].entries()) {
      const xs: number[] = [];
      const ys: number[] = [];
      for (let i = 0; i < 16 + k; i++) {
        xs.push(uncached - (i % 3));
        ys.push(3 + uncached * 0.004 + ((i * 7919 + k) % 17) / 17);
      }
      x.push(...xs);
      y.push(...ys);
      merged = mergeTtftMoments(merged, ttftMoments(xs, ys));
    }
    const direct = fitTtftModel(x, y)!;
    const refit = fitFromMoments(merged)!;
    expect(refit.n).toBe(direct.n);
    expect(refit.fixed_ms).toBeCloseTo(direct.fixed_ms, 9);
    expect(refit.prefill_us_per_token).toBeCloseTo(direct.prefill_us_per_token, 9);
    expect(refit.r2!).toBeCloseTo(direct.r2!, 12);
    expect(mergeTtftMoments(null, null)).toBeNull();
    expect(mergeTtftMoments(merged, null)).toBe(merged);
    expect(ttftMoments([], [])).toBeNull();
  });

  test("renders a block with the fitted values", () => {
    const text = renderTtftFit(fitTtftModel([0, 100], [1, 2]));
    expect(text).toContain("Prefill cost (µs/uncached token):        10.000");
    expect(text).toContain("Fixed overhead (ms):                     1.00");
    expect(renderTtftFit(null)).toContain("not enough distinct");
  });
});
