/**
 * A point's records -> its request metrics and where it sits, as the reference script's line says them: the script's
 * calculate_metrics (same numbers) with our failure buckets and HDR histograms, the line's place in the script's words,
 * and the cached-token statistics. Each is one group of keys for the line builder (schema/build-line.ts), which puts
 * them in the script's order.
 */
import type { RequestRecord } from "../schema/record.ts";
import type { RoundRecord, SweepRecord } from "../schema/lines.ts";
import type { ErrorEntry } from "../schema/nested.ts";
import { createLatencyHistogram, encodeHistogram, recordMs } from "./histograms.ts";
import { computeScriptMetrics, type ScriptMetrics } from "./script-metrics.ts";
import { npMean } from "./stats.ts";

/** Where a sweep line sits, as the script's first keys say it. */
export interface ScriptPlace {
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
}

/** The script's place keys of a sweep line (dataset_name: "warm-cache", the sweep's prompts). */
export function scriptPlaceKeys(p: ScriptPlace) {
  return {
    backend: p.backend,
    dataset_name: "warm-cache",
    request_rate: p.requestRate,
    max_concurrency: p.maxConcurrency,
    shared_prefix_pct: p.pct,
    prefix_len: p.prefixLen,
    suffix_len: p.suffixLen,
    total_tokens: p.totalTokens,
    num_prompts: p.numPrompts,
    output_len: p.outputLen,
  } satisfies Partial<SweepRecord>;
}

/** Encoded HDR histograms of the raw samples, microseconds. */
export type LineHistograms = RoundRecord["hdr"];

/** Bound on distinct error buckets kept in a result. */
export const MAX_ERROR_ENTRIES = 20;
/** Bound on the length of one error message kept in a result, characters. */
export const MAX_ERROR_MESSAGE_CHARS = 200;

/** Failures bucketed by kind + truncated message, largest first (ties keep first-seen order). */
function bucketErrors(records: RequestRecord[]): { errors: ErrorEntry[]; byKind: Record<string, number> } {
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

/** Cached tokens of the successful requests that reported them; null where none did. */
export function cachedTokenStats(records: readonly RequestRecord[]): Pick<SweepRecord, "mean_cached_tokens" | "min_cached_tokens" | "max_cached_tokens"> {
  const reported: number[] = [];
  for (const r of records) if (r.ok && r.cachedTokens >= 0) reported.push(r.cachedTokens);
  if (reported.length === 0) return { mean_cached_tokens: null, min_cached_tokens: null, max_cached_tokens: null };
  let min = Infinity;
  let max = -Infinity;
  for (const c of reported) {
    if (c < min) min = c;
    if (c > max) max = c;
  }
  return { mean_cached_tokens: npMean(reported), min_cached_tokens: min, max_cached_tokens: max };
}

/**
 * The script's calculate_metrics over any set of requests measured in one window: counts, throughputs, the
 * latency series' mean/median/std/p90/p99 and their HDR histograms. A pct's line and a multi-turn round's line
 * both report exactly these.
 */
export type RequestMetrics = ScriptMetrics &
  Pick<SweepRecord, "benchmark_duration" | "failed" | "errors" | "errors_by_kind" | "retried_connections" | "hdr_unit"> & { hdr: LineHistograms };

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
    retried_connections: records.filter((r) => r.retriedConnection === true).length,
    hdr: {
      ttft_us: encodeHistogram(h.ttft),
      tpot_us: encodeHistogram(h.tpot),
      itl_us: encodeHistogram(h.itl),
      e2e_latency_us: encodeHistogram(h.e2e),
    },
    hdr_unit: "us",
  };
}
