import { describe, expect, test } from "bun:test";
import { npMean, npMedian, npPercentile, npStd } from "../../../src/metrics/stats.ts";
import cases from "../../fixtures/metrics/numpy_stats.json";

interface StatsCase {
  name: string;
  values: number[];
  mean: number;
  median: number;
  std: number;
  percentiles: Record<string, number>;
}

const fixture = cases as StatsCase[];

describe("numpy-exact statistics (fixtures from numpy 2.4)", () => {
  test("the fixture covers the pairwise-sum branches", () => {
    const sizes = new Set(fixture.map((c) => c.values.length));
    for (const n of [1, 2, 7, 8, 9, 127, 128, 129, 1000, 12737]) expect(sizes.has(n)).toBe(true);
  });

  for (const c of fixture) {
    test(`${c.name}: mean, median, std and percentiles are bit-identical`, () => {
      const values = Float64Array.from(c.values);
      expect(npMean(values)).toBe(c.mean);
      expect(npMedian(values)).toBe(c.median);
      expect(npStd(values)).toBe(c.std);
      for (const [q, expected] of Object.entries(c.percentiles)) {
        expect([q, npPercentile(values, Number(q))]).toEqual([q, expected]);
      }
      // Plain arrays are read the same way as typed ones.
      expect(npMean(c.values)).toBe(c.mean);
    });
  }

  test("a left-to-right sum would not match numpy (the fixture discriminates)", () => {
    const naiveMismatches = fixture.filter((c) => {
      let naive = 0;
      for (const v of c.values) naive += v;
      return naive / c.values.length !== c.mean;
    });
    expect(naiveMismatches.length).toBeGreaterThanOrEqual(3);
  });

  test("percentiles exactly halfway between two values take numpy's `t >= 0.5` branch (the fixture discriminates)", () => {
    const halfway = fixture.filter((c) => c.name.startsWith("lerp-half-"));
    expect(halfway.map((c) => c.name)).toEqual(["lerp-half-n2-p50", "lerp-half-n6-p90", "lerp-half-n51-p99"]);
    for (const c of halfway) {
      const q = Number(c.name.split("-p")[1]);
      const sorted = Float64Array.from(c.values).sort();
      const virtualIndex = (sorted.length - 1) * (q / 100);
      const below = Math.floor(virtualIndex);
      expect(virtualIndex - below).toBe(0.5);
      const [a, b] = [sorted[below]!, sorted[below + 1]!];
      // The other branch, a + diff * t, is another float here: only b - diff * (1 - t) matches numpy.
      expect(a + (b - a) * 0.5).not.toBe(c.percentiles[String(q)]!);
      expect(b - (b - a) * 0.5).toBe(c.percentiles[String(q)]!);
      expect(npPercentile(c.values, q)).toBe(c.percentiles[String(q)]!);
    }
  });
});

describe("edge cases", () => {
  test("empty input gives NaN like numpy (the metrics write null for a series with no sample)", () => {
    expect(npMean([])).toBeNaN();
    expect(npStd([])).toBeNaN();
    expect(npMedian([])).toBeNaN();
    expect(npPercentile([], 99)).toBeNaN();
  });

  test("percentile endpoints, interpolation from both sides, and input left unsorted", () => {
    const xs = [40, 10, 30, 20];
    expect(npPercentile(xs, 0)).toBe(10);
    expect(npPercentile(xs, 100)).toBe(40);
    expect(npPercentile(xs, 50)).toBe(25);
    expect(npPercentile(xs, 10)).toBeCloseTo(13, 12);
    expect(npPercentile(xs, 90)).toBeCloseTo(37, 12);
    expect(xs).toEqual([40, 10, 30, 20]);
    expect(() => npPercentile(xs, 101)).toThrow(RangeError);
    expect(() => npPercentile(xs, -1)).toThrow(RangeError);
    expect(() => npPercentile(xs, Number.NaN)).toThrow(RangeError);
  });

  test("NaN anywhere makes median and percentiles NaN, as numpy", () => {
    expect(npMedian([1, Number.NaN, 3])).toBeNaN();
    expect(npPercentile([1, Number.NaN, 3], 10)).toBeNaN();
  });
});
