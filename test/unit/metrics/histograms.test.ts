import { describe, expect, test } from "bun:test";
import { createLatencyHistogram, decodeHistogram, encodeHistogram, histogramOfMs, mergeHistograms, recordMs } from "../../../src/metrics/histograms.ts";

/** Deterministic lognormal-ish latencies in ms (a few ms to a few s). */
function latenciesMs(count: number, seed: number): number[] {
  let state = seed >>> 0;
  const uniform = (): number => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state + 0.5) / 2 ** 32;
  };
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const gaussian = Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
    out.push(Math.exp(3 + 1.2 * gaussian));
  }
  return out;
}

describe("latency histograms (µs)", () => {
  test("recordMs rounds to whole microseconds and clamps negatives to 0", () => {
    const h = createLatencyHistogram();
    recordMs(h, 1.2344);
    recordMs(h, -5);
    expect(h.totalCount).toBe(2);
    expect(h.maxValue).toBe(1234);
    expect(h.getValueAtPercentile(1)).toBe(0);
    expect(h.getValueAtPercentile(100)).toBe(1234);
  });

  test("encode/decode round trip keeps count and p99", () => {
    const h = histogramOfMs(latenciesMs(5000, 1));
    const encoded = encodeHistogram(h);
    expect(encoded.startsWith("HISTF")).toBe(true);
    const decoded = decodeHistogram(encoded);
    expect(decoded.totalCount).toBe(5000);
    expect(decoded.getValueAtPercentile(99)).toBe(h.getValueAtPercentile(99));
    expect(decoded.getValueAtPercentile(50)).toBe(h.getValueAtPercentile(50));
  });

  test("merging two halves equals one histogram of all values", () => {
    const all = latenciesMs(4000, 7);
    const whole = histogramOfMs(all);
    const merged = mergeHistograms([encodeHistogram(histogramOfMs(all.slice(0, 1500))), encodeHistogram(histogramOfMs(all.slice(1500)))]);
    expect(merged.totalCount).toBe(whole.totalCount);
    for (const p of [50, 90, 99, 99.9]) {
      expect(merged.getValueAtPercentile(p)).toBe(whole.getValueAtPercentile(p));
    }
    // Decoding keeps bucket resolution only, so compare max against the decoded whole.
    expect(merged.maxValue).toBe(decodeHistogram(encodeHistogram(whole)).maxValue);
  });

  test("a 5e9 µs value (beyond the 1 h range) is accepted, not thrown", () => {
    const h = createLatencyHistogram();
    recordMs(h, 5e6);
    recordMs(h, 10);
    expect(h.totalCount).toBe(2);
    const top = h.getValueAtPercentile(100);
    expect(Math.abs(top - 5e9) / 5e9).toBeLessThan(1e-3);
    const decoded = decodeHistogram(encodeHistogram(h));
    expect(decoded.totalCount).toBe(2);
    expect(decoded.getValueAtPercentile(100)).toBe(top);
  });

  test("an empty histogram encodes and merges", () => {
    const merged = mergeHistograms([encodeHistogram(createLatencyHistogram()), encodeHistogram(histogramOfMs([2]))]);
    expect(merged.totalCount).toBe(1);
    expect(merged.getValueAtPercentile(50)).toBe(2000);
  });
});
