/**
 * The load a merged point really carried: runs started by hand may have overlapped, partly or not at all (a flush
 * between them serialises them), so their concurrencies and rates do not simply add up. Each run's load counts only
 * over its own window; the union's is the most that was offered (or achieved) at any one instant, and with every
 * run's request details at hand the requests truly in flight at once. Throughputs are over the time some run was
 * measuring (the union of the windows, gaps between them left out), not over the span from the first to the last.
 */

import { peakOverlap } from "../metrics/peak-overlap.ts";

/** A time span, ms since the epoch. */
export interface Span {
  startMs: number;
  endMs: number;
}

/** The length of the union of the spans, s (a gap between two runs is not in it). */
export function unionLengthS(spans: readonly Span[]): number {
  const sorted = [...spans].sort((a, b) => a.startMs - b.startMs);
  let total = 0;
  let open: Span | null = null;
  for (const s of sorted) {
    if (open !== null && s.startMs <= open.endMs) open = { startMs: open.startMs, endMs: Math.max(open.endMs, s.endMs) };
    else {
      if (open !== null) total += open.endMs - open.startMs;
      open = { ...s };
    }
  }
  if (open !== null) total += open.endMs - open.startMs;
  return total / 1000;
}

/**
 * The most of `values` in force at one instant: each value holds over its span, values of spans that overlap add
 * up. Ends come before starts at the same instant (a run that ends as another starts was never beside it).
 */
function peakSum(spans: readonly Span[], values: readonly number[]): number {
  return peakOverlap(spans, (i) => values[i]!);
}

/** The most requests in flight at once over every run's requests: each from its send to its last byte. */
export const peakInFlight = (requests: readonly Span[]): number => peakOverlap(requests);

/** Each value added up where the spans overlap, null unless every run has one. */
export function peakSumOrNull(spans: readonly Span[], values: readonly (number | null)[]): number | null {
  if (values.some((v) => v === null)) return null;
  return peakSum(spans, values as number[]);
}
