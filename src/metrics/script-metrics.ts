/**
 * The reference script's calculate_metrics, operation for operation, so every number we write equals the
 * script's bit for bit (pinned by test/unit/metrics/script-metrics.test.ts, whose fixture the script itself
 * computed).
 *
 * Why seconds: the script times requests in seconds and multiplies the statistics by 1000 at the end, and
 * numpy's mean of s × 1000 is not the same float64 as the mean of ms. Records hold milliseconds, so each time is
 * converted with `ms / 1000` (one IEEE division, as exact as the script's own seconds would be) and every
 * statistic is then computed in seconds, in the script's order.
 */
import type { RequestRecord } from "../schema/record.ts";
import type { SweepRecord } from "../schema/lines.ts";
import { npMean, npMedian, npPercentile, npStd, npSum } from "./stats.ts";

const MS_PER_S = 1000;

/** The script's BenchmarkMetrics: its fields, snake_case as in the JSONL (their meaning: the schema's key table). */
export type ScriptMetrics = Pick<
  SweepRecord,
  | "completed"
  | "total_input"
  | "total_output"
  | "total_output_retokenized"
  | "request_throughput"
  | "input_throughput"
  | "output_throughput"
  | "output_throughput_retokenized"
  | "total_throughput"
  | "total_throughput_retokenized"
  | "mean_ttft_ms"
  | "median_ttft_ms"
  | "std_ttft_ms"
  | "p90_ttft_ms"
  | "p99_ttft_ms"
  | "mean_tpot_ms"
  | "median_tpot_ms"
  | "std_tpot_ms"
  | "p90_tpot_ms"
  | "p99_tpot_ms"
  | "mean_itl_ms"
  | "median_itl_ms"
  | "std_itl_ms"
  | "p90_itl_ms"
  | "p99_itl_ms"
  | "mean_e2e_latency_ms"
  | "median_e2e_latency_ms"
  | "std_e2e_latency_ms"
  | "p99_e2e_latency_ms"
  | "concurrency"
>;

/** The script's four latency series, in one unit, from successful requests only. */
export interface LatencySeries {
  ttfts: number[];
  /** One per request with more than one output token: (latency − TTFT) / (output_len − 1). */
  tpots: number[];
  itls: number[];
  e2eLatencies: number[];
}

/** calculate_metrics' loop over the outputs, with each recorded time converted by `fromMs` first. */
function collectSeries(records: readonly RequestRecord[], fromMs: (ms: number) => number): LatencySeries {
  const series: LatencySeries = { ttfts: [], tpots: [], itls: [], e2eLatencies: [] };
  for (const r of records) {
    if (!r.ok) continue;
    const ttft = fromMs(r.ttftMs);
    const latency = fromMs(r.latencyMs);
    if (r.outputLen > 1) series.tpots.push((latency - ttft) / (r.outputLen - 1));
    for (let i = 0; i < r.itlMs.length; i++) series.itls.push(fromMs(r.itlMs[i]!));
    series.ttfts.push(ttft);
    series.e2eLatencies.push(latency);
  }
  return series;
}

/** The series in milliseconds as recorded (the HDR histograms' input; the statistics use seconds). */
export function latencySeriesMs(records: readonly RequestRecord[]): LatencySeries {
  return collectSeries(records, (ms) => ms);
}

/** The statistics of the four series (given in seconds), in the script's key order. */
export type LatencyStats = Pick<
  ScriptMetrics,
  | "mean_ttft_ms"
  | "median_ttft_ms"
  | "std_ttft_ms"
  | "p90_ttft_ms"
  | "p99_ttft_ms"
  | "mean_tpot_ms"
  | "median_tpot_ms"
  | "std_tpot_ms"
  | "p90_tpot_ms"
  | "p99_tpot_ms"
  | "mean_itl_ms"
  | "median_itl_ms"
  | "std_itl_ms"
  | "p90_itl_ms"
  | "p99_itl_ms"
  | "mean_e2e_latency_ms"
  | "median_e2e_latency_ms"
  | "std_e2e_latency_ms"
  | "p99_e2e_latency_ms"
>;

/**
 * The script's `np.f(xs or 0) * 1000` for each series, except that a series with no sample has null statistics where
 * the script writes 0 (an ITL of 0 ms when every answer was one token, which a gate then passed) or raises (an empty
 * e2e list): unmeasured, never 0.
 */
function statsOfSeries(s: LatencySeries): LatencyStats {
  const ms = (xs: readonly number[], f: (xs: readonly number[]) => number): number | null => (xs.length === 0 ? null : f(xs) * MS_PER_S);
  const mean = (xs: readonly number[]) => npMean(xs);
  const median = (xs: readonly number[]) => npMedian(xs);
  const std = (xs: readonly number[]) => npStd(xs);
  const p90 = (xs: readonly number[]) => npPercentile(xs, 90);
  const p99 = (xs: readonly number[]) => npPercentile(xs, 99);
  return {
    mean_ttft_ms: ms(s.ttfts, mean),
    median_ttft_ms: ms(s.ttfts, median),
    std_ttft_ms: ms(s.ttfts, std),
    p90_ttft_ms: ms(s.ttfts, p90),
    p99_ttft_ms: ms(s.ttfts, p99),
    mean_tpot_ms: ms(s.tpots, mean),
    median_tpot_ms: ms(s.tpots, median),
    std_tpot_ms: ms(s.tpots, std),
    p90_tpot_ms: ms(s.tpots, p90),
    p99_tpot_ms: ms(s.tpots, p99),
    mean_itl_ms: ms(s.itls, mean),
    median_itl_ms: ms(s.itls, median),
    std_itl_ms: ms(s.itls, std),
    p90_itl_ms: ms(s.itls, p90),
    p99_itl_ms: ms(s.itls, p99),
    mean_e2e_latency_ms: ms(s.e2eLatencies, mean),
    median_e2e_latency_ms: ms(s.e2eLatencies, median),
    std_e2e_latency_ms: ms(s.e2eLatencies, std),
    p99_e2e_latency_ms: ms(s.e2eLatencies, p99),
  };
}

/** The same statistics of any requests' times (a merge's union of request details), numpy-exact as the line's. */
export const latencyStats = (
  records: readonly (Pick<RequestRecord, "ok" | "ttftMs" | "latencyMs" | "outputLen"> & { itlMs: ArrayLike<number> })[],
): LatencyStats => statsOfSeries(collectSeries(records as unknown as readonly RequestRecord[], (ms) => ms / MS_PER_S));

/**
 * calculate_metrics(outputs, dur_s, tokenizer) on our records. A failed request adds 0 to every sum, as the
 * script's `output_lens.append(0)`. A series with no sample has null statistics where the script writes 0 (`xs or 0`)
 * or raises (np.percentile of an empty e2e list): a number must rest on samples (docs: "Where we differ").
 */
export function computeScriptMetrics(records: readonly RequestRecord[], durationS: number, countTokens: (text: string) => number): ScriptMetrics {
  let completed = 0;
  let totalInput = 0;
  let totalOutput = 0;
  let totalOutputRetokenized = 0;
  for (const r of records) {
    if (!r.ok) continue;
    completed += 1;
    totalInput += r.promptLen;
    totalOutput += r.outputLen;
    totalOutputRetokenized += countTokens(r.generatedText);
  }
  const s = collectSeries(records, (ms) => ms / MS_PER_S);
  return {
    completed,
    total_input: totalInput,
    total_output: totalOutput,
    total_output_retokenized: totalOutputRetokenized,
    request_throughput: completed / durationS,
    input_throughput: totalInput / durationS,
    output_throughput: totalOutput / durationS,
    output_throughput_retokenized: totalOutputRetokenized / durationS,
    total_throughput: (totalInput + totalOutput) / durationS,
    total_throughput_retokenized: (totalInput + totalOutputRetokenized) / durationS,
    ...statsOfSeries(s),
    // np.sum(e2e_latencies) / dur_s: seconds over seconds, no ×1000.
    concurrency: npSum(s.e2eLatencies) / durationS,
  };
}
