/**
 * One shared-prefix percentage's records -> the JSONL result object: the reference script's
 * calculate_metrics + maybe_write_summary_jsonl, same keys, order and numbers, followed by our extras.
 */
import type { RequestRecord } from "../schema/record.ts";
import type { RoundRecord, SweepRecord } from "../schema/lines.ts";
import type { ErrorEntry } from "../schema/nested.ts";
import { createLatencyHistogram, encodeHistogram, recordMs } from "./histograms.ts";
import { computeScriptMetrics, type ScriptMetrics } from "./script-metrics.ts";
import { npMean } from "./stats.ts";

/** Per-pct run facts the records do not carry. */
export interface PctContext {
  backend: string;
  /** Requests per second of the line; Infinity for the script's closed loop. */
  requestRate: number;
  maxConcurrency: number;
  pct: number;
  prefixLen: number;
  suffixLen: number;
  totalTokens: number;
  numPrompts: number;
  outputLen: number;
  /** Cached prompt tokens a correct prefix cache reports for every request (prefix rounded down to pages). */
  expectedCachedTokens: number;
  pageSize: number;
  /** The run was stopped (SIGINT/SIGTERM) while this pct was being measured. */
  interrupted: boolean;
}

export interface SummarizeInput {
  records: RequestRecord[];
  /** Wall time from the first send to the last completion, seconds (the script's benchmark_duration). */
  durationS: number;
  /** Token count of generated text without special tokens (the script's retokenized length). */
  countTokens: (text: string) => number;
  context: PctContext;
}

// The line's shapes (each field with what it means) are the schema's: declared once in its key table.
/** One bounded error bucket: failures with the same kind and (truncated) message. */

/** Encoded HDR histograms of the raw samples, microseconds. */
export type PctHistograms = RoundRecord["hdr"];

/**
 * The JSONL result of one pct. Keys up to `concurrency` are the script's, in its order (the key order is SCRIPT_KEYS'
 * in pct-record.ts; the metrics themselves are script-metrics.ts's); *_ms in milliseconds.
 */
export type PctResult = ScriptMetrics &
  Pick<
    SweepRecord,
    | "backend"
    | "dataset_name"
    | "request_rate"
    | "max_concurrency"
    | "shared_prefix_pct"
    | "prefix_len"
    | "suffix_len"
    | "total_tokens"
    | "num_prompts"
    | "output_len"
    | "benchmark_duration"
    | "failed"
    | "errors"
    | "errors_by_kind"
    | "interrupted"
    | "page_size"
    | "expected_cached_tokens"
    | "mean_cached_tokens"
    | "min_cached_tokens"
    | "max_cached_tokens"
    | "cached_tokens_mismatched"
    | "hdr_unit"
  > & { hdr: PctHistograms };

/** Bound on distinct error buckets kept in a result. */
export const MAX_ERROR_ENTRIES = 20;
/** Bound on the length of one error message kept in a result, characters. */
export const MAX_ERROR_MESSAGE_CHARS = 200;

/** Failures bucketed by kind + truncated message, largest first (ties keep first-seen order). */
export function bucketErrors(records: RequestRecord[]): { errors: ErrorEntry[]; byKind: Record<string, number> } {
  const buckets = new Map<string, ErrorEntry>();
  const byKind: Record<string, number> = {};
  for (const r of records) {
    if (r.ok) continue;
    const kind = r.failureKind ?? "unknown";
    const message = r.failureMessage.slice(0, MAX_ERROR_MESSAGE_CHARS);
    byKind[kind] = (byKind[kind] ?? 0) + 1;
    const key = `${kind}\u0000${message}`;
    const entry = buckets.get(key);
    if (entry) entry.count += 1;
    else buckets.set(key, { kind, message, count: 1 });
  }
  const errors = [...buckets.values()].sort((a, b) => b.count - a.count).slice(0, MAX_ERROR_ENTRIES);
  return { errors, byKind };
}

function cacheStats(records: RequestRecord[], expected: number) {
  const reported: number[] = [];
  for (const r of records) if (r.ok && r.cachedTokens >= 0) reported.push(r.cachedTokens);
  if (reported.length === 0) {
    return { mean: null, min: null, max: null, mismatched: null };
  }
  let min = Infinity;
  let max = -Infinity;
  let mismatched = 0;
  for (const c of reported) {
    if (c < min) min = c;
    if (c > max) max = c;
    if (c !== expected) mismatched += 1;
  }
  return { mean: npMean(reported), min, max, mismatched };
}

/**
 * The script's calculate_metrics over any set of requests measured in one window: counts, throughputs, the
 * latency series' mean/median/std/p90/p99 and their HDR histograms. A pct's line and a multi-turn round's line
 * both report exactly these.
 */
export type RequestMetrics = Pick<
  PctResult,
  | "completed"
  | "benchmark_duration"
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
  | "failed"
  | "errors"
  | "errors_by_kind"
  | "hdr"
  | "hdr_unit"
>;

/**
 * The script's series (TTFT, TPOT, ITL, E2E of the successful requests) in ms as recorded, straight into HDR
 * histograms: no second copy of the series, whose ITLs alone are requests x tokens long.
 */
function latencyHistograms(records: readonly RequestRecord[]) {
  const h = { ttft: createLatencyHistogram(), tpot: createLatencyHistogram(), itl: createLatencyHistogram(), e2e: createLatencyHistogram() };
  for (const r of records) {
    if (!r.ok) continue;
    recordMs(h.ttft, r.ttftMs);
    if (r.outputLen > 1) recordMs(h.tpot, (r.latencyMs - r.ttftMs) / (r.outputLen - 1));
    for (let i = 0; i < r.itlMs.length; i++) recordMs(h.itl, r.itlMs[i]!);
    recordMs(h.e2e, r.latencyMs);
  }
  return h;
}

export function requestMetrics(records: RequestRecord[], durationS: number, countTokens: (text: string) => number): RequestMetrics {
  const { completed, ...scriptMetrics } = computeScriptMetrics(records, durationS, countTokens);
  const h = latencyHistograms(records);
  const { errors, byKind } = bucketErrors(records);
  return {
    completed,
    benchmark_duration: durationS,
    // The rest of the script's metrics, in its order.
    ...scriptMetrics,
    failed: records.length - completed,
    errors,
    errors_by_kind: byKind,
    hdr: {
      ttft_us: encodeHistogram(h.ttft),
      tpot_us: encodeHistogram(h.tpot),
      itl_us: encodeHistogram(h.itl),
      e2e_latency_us: encodeHistogram(h.e2e),
    },
    hdr_unit: "us",
  };
}

/** The script's calculate_metrics + summary JSONL object for one pct, then our per-request extras. */
export function summarizePct(input: SummarizeInput): PctResult {
  const { records, durationS, context } = input;
  const m = requestMetrics(records, durationS, input.countTokens);
  const cache = cacheStats(records, context.expectedCachedTokens);
  const result: PctResult = {
    backend: context.backend,
    dataset_name: "warm-cache",
    request_rate: context.requestRate,
    max_concurrency: context.maxConcurrency,
    shared_prefix_pct: context.pct,
    prefix_len: context.prefixLen,
    suffix_len: context.suffixLen,
    total_tokens: context.totalTokens,
    num_prompts: context.numPrompts,
    output_len: context.outputLen,
    completed: m.completed,
    benchmark_duration: m.benchmark_duration,
    total_input: m.total_input,
    total_output: m.total_output,
    total_output_retokenized: m.total_output_retokenized,
    request_throughput: m.request_throughput,
    input_throughput: m.input_throughput,
    output_throughput: m.output_throughput,
    output_throughput_retokenized: m.output_throughput_retokenized,
    total_throughput: m.total_throughput,
    total_throughput_retokenized: m.total_throughput_retokenized,
    mean_ttft_ms: m.mean_ttft_ms,
    median_ttft_ms: m.median_ttft_ms,
    std_ttft_ms: m.std_ttft_ms,
    p90_ttft_ms: m.p90_ttft_ms,
    p99_ttft_ms: m.p99_ttft_ms,
    mean_tpot_ms: m.mean_tpot_ms,
    median_tpot_ms: m.median_tpot_ms,
    std_tpot_ms: m.std_tpot_ms,
    p90_tpot_ms: m.p90_tpot_ms,
    p99_tpot_ms: m.p99_tpot_ms,
    mean_itl_ms: m.mean_itl_ms,
    median_itl_ms: m.median_itl_ms,
    std_itl_ms: m.std_itl_ms,
    p90_itl_ms: m.p90_itl_ms,
    p99_itl_ms: m.p99_itl_ms,
    mean_e2e_latency_ms: m.mean_e2e_latency_ms,
    median_e2e_latency_ms: m.median_e2e_latency_ms,
    std_e2e_latency_ms: m.std_e2e_latency_ms,
    p99_e2e_latency_ms: m.p99_e2e_latency_ms,
    concurrency: m.concurrency,
    failed: m.failed,
    errors: m.errors,
    errors_by_kind: m.errors_by_kind,
    interrupted: context.interrupted,
    page_size: context.pageSize,
    expected_cached_tokens: context.expectedCachedTokens,
    mean_cached_tokens: cache.mean,
    min_cached_tokens: cache.min,
    max_cached_tokens: cache.max,
    cached_tokens_mismatched: cache.mismatched,
    hdr: m.hdr,
    hdr_unit: "us",
  };
  return result;
}
