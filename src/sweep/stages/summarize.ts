/**
 * Stage: a line's records and everything around them -> the one typed PctRecord. Pure: the script's metrics, the
 * latency from the intended send time, the cache verdict, the client's health, and this line's share of the
 * sweep's TTFT model.
 */
import { checkCache, type CacheCheck } from "../../metrics/cache-check.ts";
import { buildPctRecord, type PctRecord } from "../../metrics/pct-record.ts";
import { summarizeIntended } from "../../metrics/intended.ts";
import { isSaturated } from "../../metrics/self-check.ts";
import { summarizePct } from "../../metrics/summarize.ts";
import { fitFromMoments, mergeTtftMoments, ttftMoments, type TtftMoments } from "../../metrics/ttft-model.ts";
import type { RequestRecord } from "../../metrics/record.ts";
import type { SweepContext } from "../context.ts";
import { idleCollector } from "../idle-gc.ts";
import type { LinePlan, PctPlan } from "../plan.ts";
import type { Measurement } from "./measure.ts";
import type { CacheReset } from "./reset-cache.ts";
import type { WarmResult } from "./warm.ts";

/** The record, the cache verdict whose problems are logged, and the sweep's TTFT moments including this pct. */
export interface PctSummary {
  record: PctRecord;
  cache: CacheCheck;
  sweepFit: TtftMoments | null;
}

export function summarizeMeasurement(plan: PctPlan, line: LinePlan, reset: CacheReset, warm: WarmResult, m: Measurement, ctx: SweepContext): PctSummary {
  const { opts, server, tokenizer } = ctx;
  const collect = idleCollector();
  const metrics = summarizePct({
    records: m.records,
    durationS: m.durationS,
    countTokens: (text) => {
      collect();
      return tokenizer.countTokens(text);
    },
    context: {
      backend: opts.backend,
      requestRate: line.rate,
      maxConcurrency: opts.maxConcurrency,
      pct: plan.pct,
      prefixLen: plan.prefixLen,
      suffixLen: plan.suffixLen,
      totalTokens: plan.promptLen,
      numPrompts: line.count,
      outputLen: opts.outputLen,
      expectedCachedTokens: plan.expectedCachedTokens,
      pageSize: server.pageSize,
      interrupted: m.interrupted,
    },
  });
  const cache = checkCache({
    records: m.records,
    expectedCachedTokens: plan.expectedCachedTokens,
    promptLen: plan.promptLen,
    // Without a flush there is nothing to prove: a warm hit on an earlier pct's cache is expected then.
    warmCachedTokens: reset.flushed ? warm.cachedTokens : null,
    flushProbeCachedTokens: reset.probeCachedTokens,
    mode: opts.verifyCache,
    tolerance: opts.cacheTolerance,
  });
  const intended = summarizeIntended(m.records, m.t0Ms);
  const fit = fitSamples(m.records, plan.expectedCachedTokens);
  const sweepFit = mergeTtftMoments(ctx.state.ttftFit, fit);
  const record = buildPctRecord(metrics, {
    run_id: ctx.runId,
    run: ctx.state.linesWritten === 0 ? ctx.run : undefined,
    sent: m.records.length,
    failed: metrics.failed,
    errors: metrics.errors,
    errors_by_kind: metrics.errors_by_kind,
    interrupted: m.interrupted,
    burstiness: Number.isFinite(line.rate) ? opts.burstiness : null,
    duration_limit_s: Number.isFinite(line.rate) ? opts.durationS : null,
    ...intended.metrics,
    page_size: server.pageSize,
    expected_cached_tokens: plan.expectedCachedTokens,
    mean_cached_tokens: metrics.mean_cached_tokens,
    min_cached_tokens: metrics.min_cached_tokens,
    max_cached_tokens: metrics.max_cached_tokens,
    cached_tokens_mismatched: metrics.cached_tokens_mismatched,
    cached_tokens_counts: cache.cachedTokensCounts,
    expected_hit_ratio: cache.expectedHitRatio,
    observed_hit_ratio: cache.observedHitRatio,
    server_cache_hit_rate: m.serverHitRate,
    cache_check: cache.status,
    flushed: reset.flushed,
    flush_attempts: reset.attempts,
    flush_verified: cache.flushVerified,
    flush_probe_cached_tokens: reset.probeCachedTokens,
    warm_verified: cache.warmVerified,
    warm_cached_tokens: warm.cachedTokens,
    client_loop_lag_p99_ms: m.health.loopLagP99Ms,
    client_loop_lag_max_ms: m.health.loopLagMaxMs,
    client_js_cpu_pct: m.health.jsCpuPct,
    client_http_cpu_pct: m.health.httpCpuPct,
    client_cpu_pct: m.health.processCpuPct,
    client_saturated: isSaturated(m.health),
    ttft_fit: fit,
    ttft_model: fitFromMoments(sweepFit),
    hdr: { ...metrics.hdr, ...intended.hdr },
    hdr_unit: metrics.hdr_unit,
    warmbench_version: ctx.run.warmbench_version,
    started_at: m.startedAt,
    model: server.model ?? opts.model,
    tokenizer: tokenizer.path,
    population_size: tokenizer.population.length,
    seed: opts.seed.toString(),
    base_url: opts.baseUrl,
    server_version: server.info.version,
    text_mode: server.textMode,
  });
  return { record, cache, sweepFit };
}

/** (uncached tokens, TTFT) of every successful request; the expected value stands in where the server is silent. */
function fitSamples(records: readonly RequestRecord[], expectedCachedTokens: number) {
  const uncached: number[] = [];
  const ttftMs: number[] = [];
  for (const r of records) {
    if (!r.ok) continue;
    uncached.push(r.promptLen - (r.cachedTokens >= 0 ? r.cachedTokens : expectedCachedTokens));
    ttftMs.push(r.ttftMs);
  }
  return ttftMoments(uncached, ttftMs);
}
