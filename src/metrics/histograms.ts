/**
 * HDR latency histograms in integer microseconds, encoded into the JSONL summary so runs from several
 * processes or machines can be merged later without keeping every sample.
 */
import * as hdr from "hdr-histogram-js";
import type { Histogram } from "hdr-histogram-js";

/** Largest value tracked without resizing: one hour, in microseconds. */
const HIGHEST_TRACKABLE_US = 3_600_000_000;

/** A latency histogram in microseconds (1 µs to 1 h at 3 significant digits; grows beyond instead of throwing). */
export function createLatencyHistogram(): Histogram {
  // The pure-JS Int32 build is fast enough (tens of M records/s) and needs no destroy(), unlike WASM.
  return hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: HIGHEST_TRACKABLE_US,
    numberOfSignificantValueDigits: 3,
    autoResize: true,
  });
}

/** Records a duration given in milliseconds as whole microseconds; negatives (clock skew) count as 0. */
export function recordMs(histogram: Histogram, ms: number): void {
  // hdr-histogram-js buckets fractional values inconsistently with maxValue, so record integers only.
  const us = Math.round(ms * 1000);
  // Not Math.max alone: a NaN would pass through it.
  histogram.recordValue(Number.isNaN(us) ? 0 : Math.max(us, 0));
}

/** A histogram of many millisecond values. */
export function histogramOfMs(valuesMs: ArrayLike<number>): Histogram {
  const histogram = createLatencyHistogram();
  for (let i = 0; i < valuesMs.length; i++) recordMs(histogram, valuesMs[i]!);
  return histogram;
}

/** HdrHistogram V2 compressed form (deflate + base64, "HISTF..."), readable by other HdrHistogram ports. */
export function encodeHistogram(histogram: Histogram): string {
  return hdr.encodeIntoCompressedBase64(histogram);
}

/** Inverse of encodeHistogram. */
export function decodeHistogram(encoded: string): Histogram {
  return hdr.decodeFromCompressedBase64(encoded);
}

/** One histogram holding the counts of every encoded histogram given. */
export function mergeHistograms(encoded: readonly string[]): Histogram {
  const merged = createLatencyHistogram();
  for (const s of encoded) merged.add(decodeHistogram(s));
  return merged;
}
