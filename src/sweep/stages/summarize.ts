/**
 * Stage: a line's records and everything around them -> the one typed PctRecord. Pure: the script's metrics, the
 * latency from the intended send time, the cache verdict, the client's health, and this line's share of the
 * sweep's TTFT model.
 */
import { provenance } from "../../engine/provenance.ts";
import { checkCache, type CacheCheck } from "../../metrics/cache-check.ts";
import { cachePressure } from "../../metrics/cache-pressure.ts";
import { tierStats } from "../../metrics/cache-tiers.ts";
import { buildPctRecord, type PctRecord } from "../../metrics/pct-record.ts";
import { summarizeIntended } from "../../metrics/intended.ts";
import { isSaturated } from "../../metrics/self-check.ts";
import { summarizePct } from "../../metrics/summarize.ts";
import { fitFromMoments, mergeTtftMoments, ttftMoments, type TtftMoments } from "../../metrics/ttft-model.ts";
import type { RequestRecord } from "../../schema/record.ts";
import { evaluateGates } from "../../gates/evaluate.ts";
import type { PromptBatch } from "./build-prompts.ts";
import type { SweepContext, SweepState } from "../context.ts";
import { idleCollector } from "../../engine/idle-gc.ts";
import type { LinePlan, PctPlan } from "../plan.ts";
import type { Measurement } from "./measure.ts";
import type { CacheReset } from "../../engine/reset-cache.ts";
import type { WarmResult } from "../../engine/warm.ts";
import type { PromptDrift } from "../../metrics/pct-record.ts";
import type { TextPrompts } from "../../workload/text-prompts.ts";

/** The record, the cache verdict whose problems are logged, and the sweep's TTFT moments including this pct. */
export interface PctSummary {
  record: PctRecord;
  cache: CacheCheck;
  sweepFit: TtftMoments | null;
}

/** Everything a line's record is made of. */
export interface MeasuredLine {
  plan: PctPlan;
  line: LinePlan;
  batch: PromptBatch;
  reset: CacheReset;
  warm: WarmResult;
  measurement: Measurement;
  ctx: SweepContext;
  /** The sweep so far (with the chat template's head as this line's reset left it). */
  state: SweepState;
}

export function summarizeMeasurement(input: MeasuredLine): PctSummary {
  const { plan, line, batch, reset, warm, measurement: m, ctx, state } = input;
  const { opts, server, tokenizer } = ctx;
  const expected = expectations(plan, batch, server.pageSize, state.templateHeadTokens);
  const collect = idleCollector();
  const metrics = summarizePct({
    records: m.records,
    durationS: m.durationS,
    countTokens: (text) => {
      collect();
      return tokenizer.countTokens(text);
    },
    context: {
      backend: ctx.backend.name,
      requestRate: line.rate,
      maxConcurrency: opts.maxConcurrency,
      pct: plan.pct,
      prefixLen: plan.prefixLen,
      suffixLen: plan.suffixLen,
      totalTokens: plan.promptLen,
      numPrompts: line.count,
      outputLen: opts.outputLen,
      expectedCachedTokens: expected.typical,
      pageSize: server.pageSize,
      interrupted: m.interrupted,
    },
  });
  const cache = checkCache({
    records: m.records,
    expectedCachedTokens: expected.typical,
    expectedRange: expected.perPrompt ?? undefined,
    flushGap: reset.flushGap,
    promptLen: plan.promptLen,
    // Without a flush there is nothing to prove: a warm hit on an earlier pct's cache is expected then. A text
    // prompt's warm shares the chat template's head with the probe before it, so only the probe proves the flush.
    warmCachedTokens: reset.flushed && batch.text === null ? warm.cachedTokens : null,
    flushProbeCachedTokens: reset.probeCachedTokens,
    mode: opts.verifyCache,
    tolerance: opts.cacheTolerance,
  });
  const pressure = cachePressure(m.records, () => expected.typical, plan.workingSetTokens, {
    deviceTokens: server.info.cacheCapacityTokens,
    hostTokens: server.info.hostCacheCapacityTokens,
  });
  const tiers = tierStats(m.records);
  const intended = summarizeIntended(m.records, m.t0Ms);
  const fit = fitSamples(m.records, expected.typical);
  const sweepFit = mergeTtftMoments(state.ttftFit, fit);
  const record = buildPctRecord(metrics, {
    run_id: ctx.runId,
    run: state.linesWritten === 0 ? ctx.run : undefined,
    repeat: line.repeat ?? undefined,
    gates: [],
    workload: {
      backend: ctx.backend.name,
      tokenizer_sha256: tokenizer.sha256,
      vocab_size: tokenizer.vocabSize,
      total_tokens: plan.promptLen,
      output_len: opts.outputLen,
      ignore_eos: !opts.disableIgnoreEos,
      num_prompts: line.count,
      max_concurrency: opts.maxConcurrency,
      seed: opts.seed.toString(),
      shared_prefix_pct: plan.pct,
      prompt_ids_hash: batch.idsHash,
    },
    sent: m.records.length,
    failed: metrics.failed,
    errors: metrics.errors,
    errors_by_kind: metrics.errors_by_kind,
    interrupted: m.interrupted,
    burstiness: Number.isFinite(line.rate) ? opts.burstiness : null,
    duration_limit_s: Number.isFinite(line.rate) ? opts.durationS : null,
    ...intended.metrics,
    page_size: server.pageSize,
    expected_cached_tokens: expected.typical,
    mean_cached_tokens: metrics.mean_cached_tokens,
    min_cached_tokens: metrics.min_cached_tokens,
    max_cached_tokens: metrics.max_cached_tokens,
    cached_tokens_mismatched: cache.checked > 0 ? cache.mismatched : null,
    cached_tokens_counts: cache.cachedTokensCounts,
    expected_hit_ratio: cache.expectedHitRatio,
    observed_hit_ratio: cache.observedHitRatio,
    server_cache_hit_rate: m.serverHitRate,
    working_set: plan.workingSet,
    ...pressure,
    cached_tokens_by_tier: tiers.cachedTokensByTier,
    ttft_by_tier: tiers.ttftByTier,
    cache_check: cache.status,
    flushed: reset.flushed,
    flush_attempts: reset.attempts,
    flush_verified: cache.flushVerified,
    flush_probe_cached_tokens: reset.probeCachedTokens,
    warm_verified: cache.warmVerified,
    warm_cached_tokens: warm.cachedTokens,
    client_loop_lag_p99_ms: m.health.loopLagP99Ms,
    client_loop_lag_max_ms: m.health.loopLagMaxMs,
    client_own_lag_p99_ms: m.health.ownLagP99Ms,
    client_js_cpu_pct: m.health.jsCpuPct,
    client_http_cpu_pct: m.health.httpCpuPct,
    client_cpu_pct: m.health.processCpuPct,
    client_saturated: isSaturated(m.health),
    shards: m.shards,
    ttft_fit: fit,
    ttft_model: fitFromMoments(sweepFit),
    hdr: { ...metrics.hdr, ...intended.hdr },
    hdr_unit: metrics.hdr_unit,
    ...provenance(ctx, m.startedAt),
    prompt_encoding: ctx.backend.promptEncoding,
    prompt_drift: batch.text === null ? null : promptDrift(plan, batch.text, state.templateHeadTokens),
  });
  // Gates read the finished record, so they are judged on exactly the numbers written next to them.
  record.gates = evaluateGates(opts.gates, record);
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

/**
 * What every request should report cached: the plan's page-aligned prefix for token-id prompts. A text prompt
 * (chat) shares the chat template's head and the prefix as the server re-tokenizes it; where the prefix text ends
 * the boundary can move by a word, depending on what the slot held before, so each prompt allows a range: from the
 * prefix's stable tokens to all it shares, in whole pages. A paged cache reports the template head rounded down to
 * a page, so the head itself is known only to within a page, which widens the range by up to one page. `typical`
 * is the count most prompts should report with the head as observed (the JSONL's expected_cached_tokens).
 */
function expectations(
  plan: PctPlan,
  batch: PromptBatch,
  page: number,
  head: number,
): { typical: number; perPrompt: ((i: number) => readonly [number, number]) | null } {
  const text = batch.text;
  if (text === null) return { typical: plan.expectedCachedTokens, perPrompt: null };
  const headHigh = head + page - 1;
  const pages = (tokens: number): number => Math.floor(tokens / page) * page;
  const low = pages(head + text.stableTokens);
  const perPrompt = (i: number): readonly [number, number] => [low, pages(headHigh + Math.max(text.sharedTokens[i] ?? 0, text.prefixTokens))];
  return { typical: pages(head + text.prefixTokens), perPrompt };
}

/** The JSONL's account of text prompts: how the prefix re-tokenized and what every prompt shares of it. */
function promptDrift(plan: PctPlan, text: TextPrompts, templateHeadTokens: number): PromptDrift {
  let min = Infinity;
  let max = 0;
  for (let position = 0; plan.indexAt(position) < plan.numPrompts; position++) {
    const shared = text.sharedTokens[plan.indexAt(position)] ?? 0;
    min = Math.min(min, shared);
    max = Math.max(max, shared);
  }
  return {
    prefix_ids: plan.prefixLen,
    prefix_tokens: text.prefixTokens,
    prefix_drift_at: text.prefixDriftAt,
    stable_tokens: text.stableTokens,
    min_shared_tokens: Number.isFinite(min) ? min : 0,
    max_shared_tokens: max,
    template_head_tokens: templateHeadTokens,
  };
}
