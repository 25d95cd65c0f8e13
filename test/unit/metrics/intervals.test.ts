/**
 * Welch's interval against SciPy 1.17 (scipy.stats.t.ppf, ttest_ind(equal_var=False).confidence_interval(0.95)),
 * the figures computed once and written here: the t quantiles at integer and fractional degrees of freedom, and two
 * intervals (Wikipedia's Welch example, and three repeats a side as compare sees them).
 */
import { describe, expect, test } from "bun:test";
import { meanInterval, studentTCdf, studentTQuantile, welchInterval } from "../../../src/metrics/intervals.ts";

describe("Student's t", () => {
  test.each([
    [1, 12.706204736174694],
    [2, 4.302652729749462],
    [3.5, 2.9400886379827282],
    [4, 2.7764451051977934],
    [10, 2.228138851986274],
    [24.98852929023142, 2.0595864913656254],
    [1000, 1.9623390808264083],
  ])("the 97.5 %% quantile at df %p", (df, expected) => {
    expect(studentTQuantile(0.975, df)).toBeCloseTo(expected, 9);
    expect(studentTQuantile(0.025, df)).toBeCloseTo(-expected, 9);
  });

  test("the CDF at Wikipedia's Welch example statistic", () => {
    expect(studentTCdf(-2.455356398286006, 24.98852929023142)).toBeCloseTo(0.01068900073143349, 10);
    expect(studentTCdf(0, 3)).toBe(0.5);
  });
});

describe("welchInterval", () => {
  const a = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4];
  const b = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4];

  test("Wikipedia's example: mean(b) - mean(a) and its 95 % interval", () => {
    const w = welchInterval(a, b);
    expect(w.diff).toBeCloseTo(2.166666666666668, 12);
    expect(w.df).toBeCloseTo(24.98852929023142, 9);
    expect(w.lo).toBeCloseTo(0.3492370661924069, 9);
    expect(w.hi).toBeCloseTo(3.984096267140929, 9);
  });

  test("three repeats a side, unequal spreads (fractional df)", () => {
    const w = welchInterval([10.0, 10.05, 10.1], [10.2, 10.4, 10.1]);
    expect(w.df).toBeCloseTo(2.423707440100878, 9);
    expect(w.lo).toBeCloseTo(-0.15597176647913263, 9);
    expect(w.hi).toBeCloseTo(0.5226384331458034, 9);
  });

  test("no spread: the interval is the point; fewer than two values a side is refused", () => {
    expect(welchInterval([5, 5], [6, 6])).toEqual({ meanBase: 5, meanNew: 6, diff: 1, lo: 1, hi: 1, df: Infinity });
    expect(() => welchInterval([1], [1, 2])).toThrow(RangeError);
  });

  test("a side's own mean, its half-width and CV", () => {
    const m = meanInterval([10, 12, 14]);
    expect(m.mean).toBe(12);
    expect(m.half).toBeCloseTo(4.302652729749462 * (2 / Math.sqrt(3)), 9);
    expect(m.cv).toBeCloseTo(2 / 12, 12);
  });
});
