/**
 * Latency from the intended send time (coordinated omission, docs/peers.md §b8): the script's TTFT and E2E start when a
 * request is actually sent, so a client that waits for a free slot, or a server so slow that sending falls behind,
 * hides that wait. These series start at the request's intended time instead (its arrival in an open-loop run, the
 * moment a slot was free in a closed loop), beside the client's own queueing (schedule lag = actual - intended) and
 * the request rate it achieved. Means, medians and percentiles as numpy computes them (an empty series is null:
 * unmeasured); HDR histograms in µs so runs can be merged.
 */
import { encodeHistogram, histogramOfMs } from "./histograms.ts";
import type { RequestRecord } from "../schema/record.ts";
import type { SweepRecord } from "../schema/lines.ts";
import { npMean, npMedian, npPercentile } from "./stats.ts";

/** The intended-time figures of a line, snake_case as written (their meaning: the schema's key table). */
export type IntendedMetrics = Pick<
  SweepRecord,
  | "achieved_request_rate"
  | "ttft_from_intended_mean_ms"
  | "ttft_from_intended_median_ms"
  | "ttft_from_intended_p90_ms"
  | "ttft_from_intended_p99_ms"
  | "e2e_from_intended_mean_ms"
  | "e2e_from_intended_median_ms"
  | "e2e_from_intended_p90_ms"
  | "e2e_from_intended_p99_ms"
  | "schedule_lag_mean_ms"
  | "schedule_lag_median_ms"
  | "schedule_lag_p90_ms"
  | "schedule_lag_p99_ms"
>;

/** HDR histograms (µs) of the intended-time series. */
export type IntendedHistograms = Pick<SweepRecord["hdr"], "ttft_from_intended_us" | "e2e_from_intended_us" | "schedule_lag_us">;

/** null for a series with no sample: unmeasured, never 0. */
function quantiles(xs: number[]) {
  if (xs.length === 0) return { mean: null, median: null, p90: null, p99: null };
  return { mean: npMean(xs), median: npMedian(xs), p90: npPercentile(xs, 90), p99: npPercentile(xs, 99) };
}

/**
 * The figures of a line's records; `t0Ms` is when sending began (the schedule's origin). TTFT and E2E count
 * successful requests, as the script's; the schedule lag counts every request that was sent.
 */
export function summarizeIntended(records: readonly RequestRecord[], t0Ms: number): { metrics: IntendedMetrics; hdr: IntendedHistograms } {
  const ttftMs: number[] = [];
  const e2eMs: number[] = [];
  const lagMs: number[] = [];
  let lastStartMs = -Infinity;
  for (const r of records) {
    lagMs.push(r.startMs - r.intendedMs);
    if (r.startMs > lastStartMs) lastStartMs = r.startMs;
    if (!r.ok) continue;
    ttftMs.push(r.firstTokenMs - r.intendedMs);
    e2eMs.push(r.lastEventMs - r.intendedMs);
  }
  const spanS = (lastStartMs - t0Ms) / 1000;
  const ttft = quantiles(ttftMs);
  const e2e = quantiles(e2eMs);
  const lag = quantiles(lagMs);
  return {
    metrics: {
      achieved_request_rate: records.length === 0 ? 0 : spanS > 0 ? records.length / spanS : null,
      ttft_from_intended_mean_ms: ttft.mean,
      ttft_from_intended_median_ms: ttft.median,
      ttft_from_intended_p90_ms: ttft.p90,
      ttft_from_intended_p99_ms: ttft.p99,
      e2e_from_intended_mean_ms: e2e.mean,
      e2e_from_intended_median_ms: e2e.median,
      e2e_from_intended_p90_ms: e2e.p90,
      e2e_from_intended_p99_ms: e2e.p99,
      schedule_lag_mean_ms: lag.mean,
      schedule_lag_median_ms: lag.median,
      schedule_lag_p90_ms: lag.p90,
      schedule_lag_p99_ms: lag.p99,
    },
    hdr: {
      ttft_from_intended_us: encodeHistogram(histogramOfMs(ttftMs)),
      e2e_from_intended_us: encodeHistogram(histogramOfMs(e2eMs)),
      schedule_lag_us: encodeHistogram(histogramOfMs(lagMs)),
    },
  };
}
