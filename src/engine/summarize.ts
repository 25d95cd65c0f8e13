/**
 * A point's records and everything around them -> one typed line (SweepLine). Pure: the script's metrics, the
 * latency from the intended send time, the cache verdict, the client's health, and this point's share of the run's
 * TTFT model. The producer says where the point sits (its axes, as data: the sweep's, plus `repeat`, `probe` or
 * `window` where it adds one) and what its prompts should find cached; this makes the line.
 */
import type { Backend, ServerProfile } from "../backends/types.ts";
import type { RunOptions } from "../config/options.ts";
import type { SweepAxes } from "../schema/axes.ts";
import type { RequestRecord } from "../schema/record.ts";
import { perRequestHitRatios } from "../metrics/per-request-hit-ratios.ts";
import { checkCache, type CacheCheck } from "../metrics/cache-check.ts";
import { cachePressure } from "../metrics/cache-pressure.ts";
import { modelCapacityOf, type RequestExpectation } from "../metrics/point-expectations.ts";
import { tierStats } from "../metrics/cache-tiers.ts";
import type { SweepLine } from "../metrics/sweep-line.ts";
import type { PromptDrift, RunInfo } from "../schema/nested.ts";
import { buildLine, type KeyGroup } from "../schema/build-line.ts";
import { clientHealthKeys } from "../metrics/client-health-keys.ts";
import { summarizeIntended } from "../metrics/intended.ts";
import { buildEvidence } from "../metrics/evidence.ts";
import { isSaturated } from "../metrics/self-check.ts";
import { steadyState } from "../metrics/steady-state.ts";
import { cachedTokenStats, requestMetrics, scriptPlaceKeys } from "../metrics/summarize.ts";
import { buildTimeline } from "../metrics/timeline.ts";
import { fitFromMoments, mergeTtftMoments, ttftMoments, type TtftMoments } from "../metrics/ttft-model.ts";
import type { LoadedTokenizer } from "../workload/tokenizer.ts";
import { idleCollector } from "./idle-gc.ts";
import type { Measurement } from "./measure.ts";
import { provenance, type ProvenanceContext } from "./provenance.ts";
import type { CacheReset } from "./reset-cache.ts";
import type { WarmResult } from "./warm.ts";
import { studyGroups, studySamples } from "./study.ts";
import type { StudyResult } from "./point-plan.ts";

/** Axes a producer adds to the sweep's (key-table.ts describes them): a repeat, a capacity probe, a replay window. */
type ExtraAxes = Partial<Pick<SweepLine, "repeat" | "probe" | "window">>;

/** What a request of the point should report cached: `typical` for most (the line's expected_cached_tokens), a range per prompt index where it varies. */
export interface Expectations {
  typical: number;
  perPrompt: ((index: number) => readonly [number, number] | null) | null;
  /**
   * How the hit ratios read them: `typical` over the prompt length (a sweep's prompts are alike), or each request's
   * own range over the prompt tokens that reported (`per-request`: a replay's prompts all differ). Absent: typical.
   */
  hitRatios?: "typical" | "per-request";
}

/** Where the point sits and what it sent. */
export interface PointSpec {
  axes: SweepAxes & ExtraAxes;
  prefixLen: number;
  suffixLen: number;
  /** Prompt length, prefix + suffix (total_tokens). */
  promptLen: number;
  /** Requests the point planned (num_prompts; with --duration, how many were due). */
  numPrompts: number;
  /** What the cache must hold for every request to hit. */
  workingSetTokens: number;
  promptIdsHash: string;
  expected: Expectations;
  /** Whether the warm's cached tokens prove the flush (a flush ran, and the warm shares nothing with the probe before it). */
  warmProvesFlush: boolean;
  promptDrift: PromptDrift | null;
  /** The run's first line carries `run`. */
  first: boolean;
  /** The TTFT model's moments over the run's points so far. */
  ttftFitSoFar: TtftMoments | null;
  /** The producer's own keys (a replay's), in its own group of the line. */
  producerKeys?: KeyGroup<"sweep">;
  /** Each request's range from the one cache model, where it judges the point (token-id prompts): the pressure keys read it. */
  ranges?: ReadonlyMap<number, RequestExpectation> | null;
  /** The capacity the model evicted at where it is not the server's (replay's --cache-tokens): working_set_fits reads it. */
  modelCapacityTokens?: number;
  /** What the engine's studies found of the point (run after its measurement): each one's keys are a group of the line. */
  studies?: readonly StudyResult[];
}

/** What summarizing needs of the run. */
export interface SummaryContext extends ProvenanceContext {
  opts: ProvenanceContext["opts"] &
    Pick<RunOptions, "maxConcurrency" | "outputLen" | "disableIgnoreEos" | "durationS" | "verifyCache" | "cacheTolerance" | "gates"> & {
      /** The arrivals' gamma shape; null: they bring their own gaps (a trace's). */
      burstiness: number | null;
    };
  server: ProvenanceContext["server"] & Pick<ServerProfile, "pageSize">;
  tokenizer: ProvenanceContext["tokenizer"] & Pick<LoadedTokenizer, "countTokens" | "sha256" | "vocabSize">;
  backend: Pick<Backend, "name" | "promptEncoding">;
  runId: string;
  run: RunInfo;
}

/** The line, the cache verdict whose problems are logged, and the run's TTFT moments including this point. */
export interface PointSummary {
  record: SweepLine;
  cache: CacheCheck;
  sweepFit: TtftMoments | null;
}

export function summarizePoint(p: PointSpec, reset: CacheReset, warm: WarmResult, m: Measurement, ctx: SummaryContext): PointSummary {
  const { opts, server, tokenizer } = ctx;
  const { axes, expected } = p;
  const open = Number.isFinite(axes.request_rate);
  const collect = idleCollector();
  const { hdr, hdr_unit, ...requests } = requestMetrics(m.records, m.durationS, (text) => {
    collect();
    return tokenizer.countTokens(text);
  });
  const cache = checkCache({
    records: m.records,
    expectedCachedTokens: expected.typical,
    expectedRange: expected.perPrompt ?? undefined,
    flushGap: reset.flushGap,
    promptLen: p.promptLen,
    // Without a flush there is nothing to prove: a warm hit on an earlier point's cache is expected then.
    warmCachedTokens: p.warmProvesFlush ? warm.cachedTokens : null,
    flushProbeCachedTokens: reset.probeCachedTokens,
    mode: opts.verifyCache,
    tolerance: opts.cacheTolerance,
    capacityKnown: server.info.cacheCapacityTokens !== null,
  });
  const ranges = p.ranges ?? null;
  const pressure = cachePressure(
    m.records,
    () => expected.typical,
    p.workingSetTokens,
    { deviceTokens: server.info.cacheCapacityTokens, hostTokens: server.info.hostCacheCapacityTokens },
    ranges === null ? undefined : { capacityTokens: p.modelCapacityTokens ?? modelCapacityOf(server.info), expectationOf: (r) => ranges.get(r.index) },
  );
  const tiers = tierStats(m.records);
  const intended = summarizeIntended(m.records, m.t0Ms);
  const fit = fitSamples(m.records, expected.typical);
  const sweepFit = mergeTtftMoments(p.ttftFitSoFar, fit);
  const hitRatios =
    expected.hitRatios === "per-request" && expected.perPrompt !== null
      ? perRequestHitRatios(m.records, expected.perPrompt)
      : { expected: cache.expectedHitRatio, observed: cache.observedHitRatio };
  // One group a concern, each computed by its owner; the builder refuses a key two groups give.
  const record = buildLine("sweep", {
    place: scriptPlaceKeys({
      backend: ctx.backend.name,
      requestRate: axes.request_rate,
      maxConcurrency: opts.maxConcurrency,
      pct: axes.shared_prefix_pct,
      prefixLen: p.prefixLen,
      suffixLen: p.suffixLen,
      totalTokens: p.promptLen,
      numPrompts: p.numPrompts,
      outputLen: opts.outputLen,
    }),
    requests,
    point: {
      run_id: ctx.runId,
      run: p.first ? ctx.run : undefined,
      gates: [],
      workload: {
        backend: ctx.backend.name,
        tokenizer_sha256: tokenizer.sha256,
        vocab_size: tokenizer.vocabSize,
        total_tokens: p.promptLen,
        output_len: opts.outputLen,
        ignore_eos: !opts.disableIgnoreEos,
        num_prompts: p.numPrompts,
        max_concurrency: opts.maxConcurrency,
        seed: opts.seed.toString(),
        shared_prefix_pct: axes.shared_prefix_pct,
        prompt_ids_hash: p.promptIdsHash,
      },
      repeat: axes.repeat,
      probe: axes.probe,
      window: axes.window,
      working_set: axes.working_set,
      sent: m.records.length,
      interrupted: m.interrupted,
      burstiness: open ? opts.burstiness : null,
      duration_limit_s: open ? opts.durationS : null,
      shards: m.shards,
    },
    evidence: {
      evidence: buildEvidence({
        records: m.records,
        planned: p.numPrompts,
        interrupted: m.interrupted,
        offeredRequestRate: axes.request_rate,
        maxConcurrency: opts.maxConcurrency,
        judgeLoad: true,
        flushProven: cache.flushVerified,
        warmProven: cache.warmVerified,
        perRequest: cache.status,
        saturated: isSaturated(m.health),
        runIds: [ctx.runId],
        studySamples: studySamples(p.studies ?? []),
      }),
    },
    ...studyGroups(p.studies ?? []),
    intended: intended.metrics,
    cache: {
      page_size: server.pageSize,
      expected_cached_tokens: expected.typical,
      ...cachedTokenStats(m.records),
      cached_tokens_mismatched: cache.checked > 0 ? cache.mismatched : null,
      cached_tokens_counts: cache.cachedTokensCounts,
      expected_hit_ratio: hitRatios.expected,
      observed_hit_ratio: hitRatios.observed,
      server_cache_hit_rate: m.serverHitRate,
      cached_tokens_by_tier: tiers.cachedTokensByTier,
      ttft_by_tier: tiers.ttftByTier,
      cache_check: cache.status,
      flushed: reset.flushed,
      flush_attempts: reset.attempts,
      flush_verified: cache.flushVerified,
      flush_probe_cached_tokens: reset.probeCachedTokens,
      warm_verified: cache.warmVerified,
      warm_cached_tokens: warm.cachedTokens,
    },
    pressure,
    health: clientHealthKeys(m.health),
    models: {
      ttft_fit: fit,
      ttft_model: fitFromMoments(sweepFit),
      steady_state: steadyState(m.records),
      timeline: buildTimeline(m.records),
      hdr: { ...hdr, ...intended.hdr },
      hdr_unit,
    },
    provenance: { ...provenance(ctx, m.startedAt), prompt_encoding: ctx.backend.promptEncoding, prompt_drift: p.promptDrift },
    producer: p.producerKeys ?? {},
  });
  // Gates are the engine's (run-point.ts): judged on the finished line, so on exactly the numbers written next to them.
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
