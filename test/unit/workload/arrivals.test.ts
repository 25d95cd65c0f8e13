import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { arrivalCount, arrivalOffsetsMs, arrivalSeed } from "../../../src/workload/arrivals.ts";
import { PyRandom } from "../../../src/workload/rng.ts";

interface GammaCase {
  seed: string;
  alpha: number;
  beta: number;
  draws: number[];
  next_random: number;
}
const gammaCases = JSON.parse(readFileSync(join(import.meta.dir, "../../fixtures/workload/py-gamma.json"), "utf8")) as GammaCase[];

function gapStats(offsetsMs: number[]): { mean: number; cv: number } {
  const gaps = offsetsMs.map((t, i) => t - (i === 0 ? 0 : offsetsMs[i - 1]!));
  const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
  const variance = gaps.reduce((a, g) => a + (g - mean) ** 2, 0) / gaps.length;
  return { mean, cv: Math.sqrt(variance) / mean };
}

describe("PyRandom.gammavariate draws what Python's random.Random(seed).gammavariate draws", () => {
  for (const c of gammaCases) {
    test(`seed ${c.seed}, alpha ${c.alpha}`, () => {
      const rng = new PyRandom(BigInt(c.seed));
      for (const expected of c.draws) {
        const x = rng.gammavariate(c.alpha, c.beta);
        // libm's log/exp may differ from V8's/JSC's in the last bit; the rejection decisions may not.
        expect(Math.abs(x - expected) / expected).toBeLessThan(1e-15);
      }
      // The same number of uniforms was consumed: the generators are still in step.
      expect(rng.random()).toBe(c.next_random);
    });
  }

  test("rejects a non-positive shape or scale", () => {
    expect(() => new PyRandom(1n).gammavariate(0, 1)).toThrow(RangeError);
    expect(() => new PyRandom(1n).gammavariate(1, -1)).toThrow(RangeError);
    expect(() => new PyRandom(1n).gammavariate(1, 0)).toThrow("gammavariate: alpha and beta must be > 0, got 1, 0");
  });
});

describe("PyRandom.clone and skipRandoms", () => {
  test("a clone draws the same sequence, independently", () => {
    const a = new PyRandom(42n);
    for (let i = 0; i < 1000; i++) a.random();
    const b = a.clone();
    const fromA = Array.from({ length: 700 }, () => a.random());
    const fromB = Array.from({ length: 700 }, () => b.random());
    expect(fromB).toEqual(fromA);
  });

  test("skipping from the middle of a block: only what is left of the block is taken before the next", () => {
    for (const [before, n] of [
      [5, 3],
      [5, 400],
      [300, 11],
      [311, 1],
    ] as const) {
      const drawn = new PyRandom(9n);
      const skipped = new PyRandom(9n);
      for (let i = 0; i < before; i++) expect(skipped.random()).toBe(drawn.random());
      for (let i = 0; i < n; i++) drawn.random();
      skipped.skipRandoms(n);
      expect([before, n, skipped.random()]).toEqual([before, n, drawn.random()]);
    }
  });

  test("skipping n randoms leaves the state as n random() calls would, across block boundaries", () => {
    for (const n of [0, 1, 311, 312, 313, 1000, 70_000]) {
      const drawn = new PyRandom(7n);
      for (let i = 0; i < n; i++) drawn.random();
      const skipped = new PyRandom(7n);
      skipped.skipRandoms(n);
      expect(skipped.random()).toBe(drawn.random());
      expect(skipped.random()).toBe(drawn.random());
    }
  });
});

describe("arrival schedule", () => {
  const spec = { ratePerS: 100, burstiness: 1, seed: 42n, count: 20_000, durationS: null };

  test("with a count, the last request is due at exactly count/rate (vLLM's rescaling)", () => {
    const offsets = [...arrivalOffsetsMs(spec)];
    expect(offsets).toHaveLength(20_000);
    expect(offsets.at(-1)!).toBeCloseTo((20_000 / 100) * 1000, 6);
    for (let i = 1; i < offsets.length; i++) expect(offsets[i]!).toBeGreaterThanOrEqual(offsets[i - 1]!);
  });

  test("Poisson gaps (K = 1): mean 1/R, coefficient of variation 1", () => {
    const { mean, cv } = gapStats([...arrivalOffsetsMs(spec)]);
    expect(mean).toBeCloseTo(10, 6);
    // The CV estimate over 20k exponential gaps has a standard error of ~0.01.
    expect(cv).toBeGreaterThan(0.95);
    expect(cv).toBeLessThan(1.05);
  });

  test("gamma gaps of shape 4: coefficient of variation 1/sqrt(4) = 0.5", () => {
    const { mean, cv } = gapStats([...arrivalOffsetsMs({ ...spec, burstiness: 4 })]);
    expect(mean).toBeCloseTo(10, 6);
    expect(cv).toBeGreaterThan(0.47);
    expect(cv).toBeLessThan(0.53);
  });

  test("burstiness inf: evenly spaced", () => {
    const offsets = [...arrivalOffsetsMs({ ...spec, burstiness: Infinity, count: 5 })];
    expect(offsets.map((o) => Math.round(o * 1e6) / 1e6)).toEqual([10, 20, 30, 40, 50]);
  });

  test("the same seed gives the same arrivals; another seed others; the gaps are Python's gammavariate draws", () => {
    const a = [...arrivalOffsetsMs({ ...spec, count: 50 })];
    expect([...arrivalOffsetsMs({ ...spec, count: 50 })]).toEqual(a);
    expect([...arrivalOffsetsMs({ ...spec, count: 50, seed: 43n })]).not.toEqual(a);
    const rng = new PyRandom(arrivalSeed(42n));
    const gaps = Array.from({ length: 50 }, () => rng.gammavariate(1, 1 / 100));
    const sum = gaps.reduce((x, y) => x + y, 0);
    expect(a[0]!).toBeCloseTo(gaps[0]! * (50 / 100 / sum) * 1000, 9);
  });

  test("rate and burstiness outside their ranges are refused, naming the value", () => {
    for (const ratePerS of [0, -1, Infinity, NaN]) {
      expect(() => [...arrivalOffsetsMs({ ...spec, ratePerS })]).toThrow(`arrivals: rate must be finite and > 0, got ${ratePerS}`);
    }
    for (const burstiness of [0, -1, NaN]) {
      expect(() => [...arrivalOffsetsMs({ ...spec, burstiness })]).toThrow(`arrivals: burstiness must be > 0, got ${burstiness}`);
    }
  });

  test("with a duration, evenly spaced (burstiness inf) and gamma gaps keep their mean 1/R; the end is exclusive", () => {
    const even = { ratePerS: 100, burstiness: Infinity, seed: 1n, count: null, durationS: 0.055 };
    expect([...arrivalOffsetsMs(even)].map((o) => Math.round(o * 1e6) / 1e6)).toEqual([10, 20, 30, 40, 50]);
    // 0.01 + 0.01 is exactly 0.02: the arrival due at the end is not sent.
    expect([...arrivalOffsetsMs({ ...even, durationS: 0.02 })]).toEqual([10]);
    expect(arrivalCount({ ...even, durationS: 0.02 })).toBe(1);
    // Shape 4, 200 req/s for 30 s: 6000 expected, standard deviation ~39.
    const shaped = { ratePerS: 200, burstiness: 4, seed: 5n, count: null, durationS: 30 };
    expect(arrivalCount(shaped)).toBeGreaterThan(5800);
    expect(arrivalCount(shaped)).toBeLessThan(6200);
  });

  test("the arrival seed is |seed| shifted past a tag, so -s and s arrive alike", () => {
    expect(arrivalSeed(42n)).toBe((42n << 32n) | 0x6172_7276n);
    expect(arrivalSeed(-42n)).toBe(arrivalSeed(42n));
    expect(arrivalSeed(0n)).toBe(0x6172_7276n);
  });

  test("the arrival stream is not the prompt stream", () => {
    expect(arrivalSeed(42n)).not.toBe(42n);
    expect(new PyRandom(arrivalSeed(42n)).random()).not.toBe(new PyRandom(42n).random());
  });

  test("with a duration: arrivals until the time is up, unscaled, and arrivalCount agrees", () => {
    const timed = { ratePerS: 200, burstiness: 1, seed: 5n, count: null, durationS: 30 };
    const offsets = [...arrivalOffsetsMs(timed)];
    expect(offsets.length).toBe(arrivalCount(timed));
    expect(offsets.at(-1)!).toBeLessThan(30_000);
    // 6000 expected, standard deviation ~77.
    expect(offsets.length).toBeGreaterThan(5700);
    expect(offsets.length).toBeLessThan(6300);
    expect(arrivalCount({ ...spec, count: 17 })).toBe(17);
  });
});
