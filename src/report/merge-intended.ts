/**
 * The intended-time figures of merged sweep lines (a round line has none): means exact (weighted by each line's
 * count), the rest from the merged histograms, the achieved rates added up (the runs sent side by side).
 */
import { createLatencyHistogram, encodeHistogram } from "../metrics/histograms.ts";
import type { Histogram } from "hdr-histogram-js";
import type { IntendedHistograms, IntendedMetrics } from "../metrics/intended.ts";
import type { LatencyStats } from "../metrics/script-metrics.ts";
import { mergedHistogram, num, pctMs, pooled, sum } from "./merge-math.ts";

/** What the intended-time figures read of a line. */
export type IntendedSource = Partial<IntendedMetrics> & { completed?: number; sent?: number; hdr?: Partial<IntendedHistograms> | null };

/** Intended-time keys taken from the merged histograms. */
export const INTENDED_FROM_HISTOGRAMS = [
  "ttft_from_intended_median_ms",
  "ttft_from_intended_p90_ms",
  "ttft_from_intended_p99_ms",
  "e2e_from_intended_median_ms",
  "e2e_from_intended_p90_ms",
  "e2e_from_intended_p99_ms",
  "schedule_lag_median_ms",
  "schedule_lag_p90_ms",
  "schedule_lag_p99_ms",
];

const HDR_KEYS = ["ttft_from_intended_us", "e2e_from_intended_us", "schedule_lag_us"] as const;

/**
 * Lines written before these figures existed were closed loops, where a request's intended time is its send time:
 * their script TTFT and E2E (merged, `script`) stand in, with no schedule lag.
 */
export function mergedIntended(
  lines: readonly IntendedSource[],
  script: { ttft: Histogram; e2e: Histogram; ttftMeanMs: number; e2eMeanMs: number; exact?: LatencyStats | null },
): { metrics: IntendedMetrics; hdr: IntendedHistograms } {
  if (!lines.every((l) => HDR_KEYS.every((k) => typeof l.hdr?.[k] === "string"))) {
    const lagFree = { schedule_lag_mean_ms: 0, schedule_lag_median_ms: 0, schedule_lag_p90_ms: 0, schedule_lag_p99_ms: 0 };
    const { ttft, e2e } = script;
    // The merged line's own script figures where merge computed them exactly (from the request details).
    const x = script.exact ?? null;
    return {
      metrics: {
        achieved_request_rate: null,
        ttft_from_intended_mean_ms: script.ttftMeanMs,
        ttft_from_intended_median_ms: x?.median_ttft_ms ?? pctMs(ttft, 50),
        ttft_from_intended_p90_ms: x?.p90_ttft_ms ?? pctMs(ttft, 90),
        ttft_from_intended_p99_ms: x?.p99_ttft_ms ?? pctMs(ttft, 99),
        e2e_from_intended_mean_ms: script.e2eMeanMs,
        e2e_from_intended_median_ms: x?.median_e2e_latency_ms ?? pctMs(e2e, 50),
        e2e_from_intended_p90_ms: pctMs(e2e, 90),
        e2e_from_intended_p99_ms: x?.p99_e2e_latency_ms ?? pctMs(e2e, 99),
        ...lagFree,
      },
      // Every file's requests, as the script figures above: not the first file's histograms alone.
      hdr: {
        ttft_from_intended_us: encodeHistogram(ttft),
        e2e_from_intended_us: encodeHistogram(e2e),
        schedule_lag_us: encodeHistogram(createLatencyHistogram()),
      },
    };
  }
  const union = (key: (typeof HDR_KEYS)[number]) => mergedHistogram(lines.map((l) => l.hdr![key]!));
  const h = { ttft: union("ttft_from_intended_us"), e2e: union("e2e_from_intended_us"), lag: union("schedule_lag_us") };
  const mean = (key: "ttft_from_intended_mean_ms" | "e2e_from_intended_mean_ms" | "schedule_lag_mean_ms", count: (l: IntendedSource) => number) =>
    pooled(lines.map((l) => ({ n: count(l), mean: num(l[key]), std: 0 }))).mean;
  const rates = lines.map((l) => l.achieved_request_rate);
  return {
    metrics: {
      achieved_request_rate: rates.every((r) => typeof r === "number") ? sum(rates as number[]) : null,
      ttft_from_intended_mean_ms: mean("ttft_from_intended_mean_ms", (l) => num(l.completed)),
      ttft_from_intended_median_ms: pctMs(h.ttft, 50),
      ttft_from_intended_p90_ms: pctMs(h.ttft, 90),
      ttft_from_intended_p99_ms: pctMs(h.ttft, 99),
      e2e_from_intended_mean_ms: mean("e2e_from_intended_mean_ms", (l) => num(l.completed)),
      e2e_from_intended_median_ms: pctMs(h.e2e, 50),
      e2e_from_intended_p90_ms: pctMs(h.e2e, 90),
      e2e_from_intended_p99_ms: pctMs(h.e2e, 99),
      schedule_lag_mean_ms: mean("schedule_lag_mean_ms", (l) => num(l.sent ?? l.completed)),
      schedule_lag_median_ms: pctMs(h.lag, 50),
      schedule_lag_p90_ms: pctMs(h.lag, 90),
      schedule_lag_p99_ms: pctMs(h.lag, 99),
    },
    hdr: { ttft_from_intended_us: encodeHistogram(h.ttft), e2e_from_intended_us: encodeHistogram(h.e2e), schedule_lag_us: encodeHistogram(h.lag) },
  };
}
