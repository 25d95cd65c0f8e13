/**
 * Latency distributions read back from a pct line's HDR histograms (`hdr`, microseconds): percentiles for
 * `compare` and CDF points for the HTML report. Exact to HDR's 3 significant digits.
 */
import { decodeHistogram } from "../metrics/histograms.ts";
import type { Histogram } from "hdr-histogram-js";
import type { LineHistograms } from "../metrics/summarize.ts";

/** The latency series a pct line keeps a histogram of, by their names in `hdr` without `_us`. */
export const HDR_SERIES = ["ttft", "tpot", "itl", "e2e_latency"] as const;
export type HdrSeries = (typeof HDR_SERIES)[number];

/** Percentiles compared and tabulated, with the name part each gets (`p999` is the 99.9th). */
export const HDR_PERCENTILES = [
  { name: "p50", percentile: 50 },
  { name: "p90", percentile: 90 },
  { name: "p99", percentile: 99 },
  { name: "p999", percentile: 99.9 },
] as const;

const cache = new WeakMap<object, Map<HdrSeries, Histogram | null>>();

/** The decoded histogram of one series of a line's `hdr`; null when absent, unreadable or empty. */
function histogramOf(hdr: LineHistograms | undefined, series: HdrSeries): Histogram | null {
  if (hdr === undefined || hdr === null || typeof hdr !== "object") return null;
  let perLine = cache.get(hdr);
  if (!perLine) {
    perLine = new Map();
    cache.set(hdr, perLine);
  }
  if (perLine.has(series)) return perLine.get(series)!;
  const encoded = hdr[`${series}_us`];
  let histogram: Histogram | null = null;
  if (typeof encoded === "string" && encoded !== "") {
    try {
      histogram = decodeHistogram(encoded);
    } catch {
      histogram = null;
    }
  }
  if (histogram !== null && histogram.totalCount === 0) histogram = null;
  perLine.set(series, histogram);
  return histogram;
}

/** The value at `percentile` (0-100) of a series, ms; null without samples. */
export function hdrPercentileMs(hdr: LineHistograms | undefined, series: HdrSeries, percentile: number): number | null {
  const h = histogramOf(hdr, series);
  return h === null ? null : h.getValueAtPercentile(percentile) / 1000;
}

/** The line's own key for a percentile of a series (numpy's, as written), or null where the line holds none. */
function lineKeyOf(series: HdrSeries, percentile: number): string | null {
  const key = percentile === 50 ? `median_${series}_ms` : percentile === 90 ? `p90_${series}_ms` : percentile === 99 ? `p99_${series}_ms` : null;
  return key === "p90_e2e_latency_ms" ? null : key;
}

/**
 * One key, one definition: a percentile as the line holds it (numpy's, the value its gates judged) where it holds
 * one, else from its histogram (p99.9, the max). What compare and the report's tables read.
 */
export function linePercentileMs(line: object, series: HdrSeries, percentile: number): { value: number | null; source: "line" | "hdr" } {
  const key = lineKeyOf(series, percentile);
  const rec = line as Record<string, unknown>;
  if (key !== null && key in rec) return { value: typeof rec[key] === "number" && Number.isFinite(rec[key]) ? (rec[key] as number) : null, source: "line" };
  return { value: hdrPercentileMs(rec.hdr as LineHistograms | undefined, series, percentile), source: "hdr" };
}

/** Percentiles at which a CDF is sampled: every whole percent, then the tail. */
const CDF_PERCENTILES = [...Array.from({ length: 100 }, (_, i) => i), 99.5, 99.9, 99.99, 100];

/** CDF points {x: latency ms, y: fraction of samples at or below it}; [] without samples. */
export function hdrCdf(hdr: LineHistograms | undefined, series: HdrSeries): Array<{ x: number; y: number }> {
  const h = histogramOf(hdr, series);
  if (h === null) return [];
  const points: Array<{ x: number; y: number }> = [];
  for (const p of CDF_PERCENTILES) {
    const x = (p === 0 ? h.minNonZeroValue : h.getValueAtPercentile(p)) / 1000;
    const y = p / 100;
    const last = points.at(-1);
    // Many percentiles fall in one bucket at low sample counts: keep the highest fraction of each value.
    if (last && last.x === x) last.y = y;
    else points.push({ x, y });
  }
  return points;
}
