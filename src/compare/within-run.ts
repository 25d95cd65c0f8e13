/**
 * The noise of one run: without repeats, a verdict on a latency statistic gets the 95 % interval of its relative
 * change from the two lines' own per-request samples (their HDR histograms, the samples the line's numbers were
 * computed from), by a seeded bootstrap over each side's samples. A p99 of 16 requests is their largest but one: its
 * interval is wide, so a single run cannot call it regressed. ITL's samples are tokens, pooled over the requests (the
 * histogram keeps no request of a token), so its interval leaves out what requests share; a per-request series (TTFT,
 * TPOT, E2E) resamples requests. A throughput is not a statistic of requests: its noise is taken as its mean E2E's.
 */
import type { Histogram } from "hdr-histogram-js";
import { decodeHistogram } from "../metrics/histograms.ts";
import { bootstrapChangePct } from "../metrics/intervals.ts";
import type { HdrSeries } from "../report/hdr-stats.ts";
import { field, type CompareLine } from "./lines.ts";
import type { CompareMetric } from "./metrics.ts";

/** The part of hdr-histogram-js's histogram that walks its recorded values (every build has it; its type omits it). */
interface RecordedValues {
  recordedValuesIterator: { reset(): void; hasNext(): boolean; next(): { valueIteratedTo: number; countAtValueIteratedTo: number } };
  medianEquivalentValue(value: number): number;
}

const samplesCache = new WeakMap<object, Map<HdrSeries, Float64Array | null>>();

/** Every sample of a line's histogram of `series`, ms, ascending (each at the middle of its HDR bucket); null without. */
function samplesOf(line: CompareLine, series: HdrSeries): Float64Array | null {
  const hdr = field(line, "hdr");
  if (typeof hdr !== "object" || hdr === null) return null;
  let perLine = samplesCache.get(hdr);
  if (perLine === undefined) {
    perLine = new Map();
    samplesCache.set(hdr, perLine);
  }
  if (perLine.has(series)) return perLine.get(series)!;
  const encoded = (hdr as Record<string, unknown>)[`${series}_us`];
  let samples: Float64Array | null = null;
  if (typeof encoded === "string" && encoded !== "") {
    try {
      samples = expand(decodeHistogram(encoded));
    } catch {
      samples = null;
    }
  }
  perLine.set(series, samples);
  return samples;
}

function expand(histogram: Histogram): Float64Array | null {
  const count = histogram.totalCount;
  if (!(count > 0)) return null;
  const h = histogram as unknown as RecordedValues;
  const out = new Float64Array(count);
  let i = 0;
  const it = h.recordedValuesIterator;
  it.reset();
  while (it.hasNext() && i < count) {
    const v = it.next();
    const ms = h.medianEquivalentValue(v.valueIteratedTo) / 1000;
    for (let k = 0; k < v.countAtValueIteratedTo && i < count; k++) out[i++] = ms;
  }
  return i === count ? out : null;
}

/** FNV-1a of the samples' series, statistic and line: a fixed draw, the same on every run of compare (and for a mean
 * E2E and the throughputs judged by it). */
function seedOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/**
 * The 95 % interval of Δ% (NEW against BASE, in percent of BASE) of a per-request statistic, from the two lines'
 * samples (a throughput: by its mean E2E's); null when the metric has none (a count) or a side has fewer than 2.
 */
export function withinRunChangePct(metric: CompareMetric, label: string, base: CompareLine, next: CompareLine): [number, number] | null {
  if (metric.perRequest === undefined) return null;
  const a = samplesOf(base, metric.perRequest.series);
  const b = samplesOf(next, metric.perRequest.series);
  if (a === null || b === null) return null;
  const ci = bootstrapChangePct(
    a,
    b,
    metric.perRequest.statistic,
    seedOf(`${metric.perRequest.series}/${JSON.stringify(metric.perRequest.statistic)}@${label}`),
  );
  if (ci === null || metric.perRequest.inverse !== true) return ci;
  // A throughput: the change its E2E's interval implies (E2E +10 % is throughput / 1.1), widened to hold its own change
  // (a line's duration is its slowest slot's: one stalled request moves it more than the mean E2E).
  const [x, y] = [metric.read(base).value, metric.read(next).value];
  if (x === null || y === null || x === 0 || !(1 + ci[0] / 100 > 0)) return null;
  const change = (y / x - 1) * 100;
  const implied: [number, number] = [(1 / (1 + ci[1] / 100) - 1) * 100, (1 / (1 + ci[0] / 100) - 1) * 100];
  return [Math.min(implied[0], change), Math.max(implied[1], change)];
}
