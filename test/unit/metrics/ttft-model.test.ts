import { describe, expect, test } from "bun:test";
import { fitTtftModel } from "../../../src/metrics/ttft-model.ts";
import { renderTtftFit } from "../../../src/report/console.ts";

describe("fitTtftModel", () => {
  test("recovers intercept and slope of exact data", () => {
    const x = [0, 1000, 7000, 35000, 70000];
    const y = x.map((u) => 12 + u * 0.0025); // 12 ms + 2.5 µs/token
    const fit = fitTtftModel(x, y)!;
    expect(fit.n).toBe(5);
    expect(fit.fixedMs).toBeCloseTo(12, 9);
    expect(fit.prefillUsPerToken).toBeCloseTo(2.5, 9);
    expect(fit.savedUsPerCachedToken).toBeCloseTo(2.5, 9);
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
    expect(fit.prefillUsPerToken).toBeGreaterThan(1.95);
    expect(fit.prefillUsPerToken).toBeLessThan(2.05);
    expect(fit.r2!).toBeLessThan(1);
    expect(fit.r2!).toBeGreaterThan(0.99);
  });

  test("no slope without two distinct x values", () => {
    expect(fitTtftModel([5], [1])).toBeNull();
    expect(fitTtftModel([5, 5, 5], [1, 2, 3])).toBeNull();
    expect(() => fitTtftModel([1, 2], [1])).toThrow(RangeError);
  });

  test("renders a block with the fitted values", () => {
    const text = renderTtftFit(fitTtftModel([0, 100], [1, 2]));
    expect(text).toContain("Prefill cost (µs/uncached token):        10.000");
    expect(text).toContain("Fixed overhead (ms):                     1.00");
    expect(renderTtftFit(null)).toContain("not enough distinct");
  });
});
