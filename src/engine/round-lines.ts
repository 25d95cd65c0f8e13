/**
 * A multi-turn round's line, made by the engine: its turns and everything around them -> the one typed RoundRecord
 * (the same metrics code as a sweep line's, each turn judged against its own range from the one cache model), its
 * cache problems, saturation and failed turns logged, and the line, its turns' ids (--dump-prompts) and their details
 * (--request-details) sent to the sink. The producer hands the round's turns and what the run knows of it, as data.
 */
import type { ServerProfile } from "../backends/types.ts";
import type { MultiturnOptions } from "../config/options.ts";
import { log } from "../log.ts";
import { checkCache } from "../metrics/cache-check.ts";
import { cachePressure } from "../metrics/cache-pressure.ts";
import { tierStats } from "../metrics/cache-tiers.ts";
import { clientHealthKeys } from "../metrics/client-health-keys.ts";
import { buildEvidence } from "../metrics/evidence.ts";
import { modelCapacityOf, type RequestExpectation } from "../metrics/point-expectations.ts";
import { describeSaturation, isSaturated, type ClientHealth } from "../metrics/self-check.ts";
import { steadyState } from "../metrics/steady-state.ts";
import { requestMetrics } from "../metrics/summarize.ts";
import { buildTimeline } from "../metrics/timeline.ts";
import { buildLine } from "../schema/build-line.ts";
import type { RoundRecord } from "../schema/lines.ts";
import type { RunInfo, ShardsReport } from "../schema/nested.ts";
import type { LoadedTokenizer } from "../workload/tokenizer.ts";
import { turnIdsText, turnKey, type TurnPlan, type TurnResult } from "../workload/turn-plan.ts";
import type { PointLines, StudyResult } from "./point-plan.ts";
import { provenance } from "./provenance.ts";
import type { RoundLineSink } from "./sink.ts";
import { studyGroups, studySamples } from "./study.ts";

/** What every round of a multi-turn run shares: its options, the server, the tokenizer, the run. */
interface RoundContext {
  opts: MultiturnOptions;
  server: ServerProfile;
  tokenizer: LoadedTokenizer;
  runId: string;
  /** Written into the run's first round line. */
  run: RunInfo;
}

/** Everything the producer knows of a round once its turns ended: the turns, how they ran, and what the flush left. */
export interface RoundLineRecipe {
  round: number;
  turns: readonly TurnResult[];
  /** Turns the round was to have. */
  plannedTurns: number;
  durationS: number;
  startedAt: string;
  interrupted: boolean;
  health: ClientHealth;
  serverHitRate: number | null;
  flushVerified: boolean | null;
  /** What the canary cached before the flush found after it (0 proves it); null: not probed, -1 unknown. */
  flushProbeCachedTokens: number | null;
  warmCachedTokens: number | null;
  /** The first line of the run carries `run`. */
  first: boolean;
  /** The processes whose turns these are; null in one process. */
  shards: ShardsReport | null;
  context: RoundContext;
  sink: RoundLineSink;
}

export function roundLines(r: RoundLineRecipe): PointLines<RoundRecord> {
  const { opts } = r.context;
  const keyOf = (p: Pick<TurnPlan, "round" | "client">): number => turnKey(opts.numClients, p.round, p.client);
  let problems: string[] = [];
  return {
    build: (point, studies) => {
      const ranges = point.ranges;
      const summary = summarizeRound(r, studies, ranges === null ? null : (p) => ranges.get(keyOf(p)));
      problems = summary.problems;
      return [summary.record];
    },
    emit: (lines, _point, detailsOf) => {
      const record = lines[0]!;
      const { round, turns } = r;
      for (const problem of problems) log.warn(`cache check (round ${round}): ${problem}`);
      if (record.client_saturated) log.warn(`round ${round}: ${describeSaturation(r.health)}`);
      const failed = turns.filter((t) => !t.rec.ok);
      if (failed.length > 0)
        log.warn(
          `round ${round}: ${failed.length}/${turns.length} turns failed (their conversations end): ${failed[0]?.rec.failureKind}: ${failed[0]?.rec.failureMessage.slice(0, 160)}`,
        );
      r.sink.line(record);
      if (opts.dumpPrompts) r.sink.prompts(turns.map((t) => dumpLine(t.plan)).join(""));
      r.sink.turns(r.context.runId, detailsOf === undefined ? turns : turns.map((t) => ({ ...t, extra: detailsOf(keyOf(t.plan)) })));
    },
  };
}

/** One --dump-prompts line per turn: which conversation and round, what it should find cached, and its ids. */
function dumpLine(t: TurnPlan): string {
  return (
    `{"client":${t.client},"round":${t.round},"system_index":${t.systemIndex},"prompt_len":${t.promptLen},` +
    `"expected_cached_tokens":${t.expectedCachedTokens},"min_cached_tokens":${t.minCachedTokens},"approximate":${t.approximate},"input_ids":[${turnIdsText(t)}]}\n`
  );
}

interface RoundSummary {
  record: RoundRecord;
  /** One line per cache problem, for the log. */
  problems: string[];
}

function summarizeRound(
  i: RoundLineRecipe,
  studies: readonly StudyResult[],
  ranges: ((plan: TurnPlan) => RequestExpectation | undefined) | null,
): RoundSummary {
  const ctx = i.context;
  const { opts, server, tokenizer } = ctx;
  const recs = i.turns.map((t) => t.rec);
  const metrics = requestMetrics(recs, i.durationS, tokenizer.countTokens);
  const rangeOf = rangesOf(ranges);
  const sums = turnSums(i.turns, expectedOf(ranges));
  // The one cache verdict (metrics/cache-check.ts), each turn judged against its own range.
  const cache = checkCache({
    records: recs.map((r, k) => ({ ...r, index: k })),
    expectedCachedTokens: 0,
    expectedRange: (k: number) => rangeOf(i.turns[k]!.plan),
    promptLen: 0,
    warmCachedTokens: null,
    flushProbeCachedTokens: i.flushProbeCachedTokens,
    mode: opts.verifyCache,
    tolerance: opts.cacheTolerance,
    capacityKnown: server.info.cacheCapacityTokens !== null,
  });
  const pressure = cachePressure(
    recs,
    (k) => (i.turns[k] as TurnResult).plan.minCachedTokens,
    workingSetTokens(i.turns, opts.sharedSystemTokens),
    { deviceTokens: server.info.cacheCapacityTokens, hostTokens: server.info.hostCacheCapacityTokens },
    // The one cache model decides the pressure keys where it judges the round.
    ranges === null ? undefined : { capacityTokens: modelCapacityOf(server.info), expectationOf: (_, k) => ranges((i.turns[k] as TurnResult).plan) },
  );
  const tiers = tierStats(recs);
  const ok = i.turns.filter((t) => t.rec.ok);
  const promptLens = ok.map((t) => t.plan.promptLen);
  const promptSum = promptLens.reduce((a, b) => a + b, 0);
  // One group a concern, each computed by its owner; the builder refuses a key two groups give.
  const record = buildLine("round", {
    round: {
      type: "round",
      run_id: ctx.runId,
      run: i.first ? ctx.run : undefined,
      gates: [],
      round: i.round,
      num_rounds: opts.numRounds,
      num_clients: opts.numClients,
      clients_in_round: i.plannedTurns,
      backend: opts.backend,
      max_concurrency: opts.maxConcurrency,
      round_barrier: opts.roundBarrier,
      ready_queue_policy: opts.readyQueuePolicy,
      shared_system_tokens: opts.sharedSystemTokens,
      first_turn_tokens: opts.firstTurnTokens,
      turn_tokens: opts.turnTokens,
      output_len: opts.outputLen,
      working_set: opts.workingSet,
      sent: i.turns.length,
      interrupted: i.interrupted,
      shards: i.shards,
      mean_prompt_len: promptLens.length > 0 ? promptSum / promptLens.length : null,
      max_prompt_len: promptLens.length > 0 ? Math.max(...promptLens) : null,
      approximate_turns: i.turns.filter((t) => t.plan.approximate).length,
    },
    requests: metrics,
    evidence: {
      evidence: buildEvidence({
        records: recs,
        planned: i.plannedTurns,
        interrupted: i.interrupted,
        offeredRequestRate: Infinity,
        maxConcurrency: opts.maxConcurrency,
        // A round's load is its conversations' (they wait on each other's turns), not an offered rate or concurrency.
        judgeLoad: false,
        flushProven: i.flushVerified,
        warmProven: null,
        perRequest: cache.status,
        saturated: isSaturated(i.health),
        runIds: [ctx.runId],
        studySamples: studySamples(studies),
      }),
    },
    ...studyGroups(studies),
    cache: {
      page_size: server.pageSize,
      expected_cached_tokens: sums.expectedSum,
      observed_cached_tokens: sums.observedSum,
      expected_hit_ratio: promptSum > 0 ? sums.expectedSum / promptSum : null,
      observed_hit_ratio: sums.observedSum !== null && sums.reportedPromptSum > 0 ? sums.observedSum / sums.reportedPromptSum : null,
      server_cache_hit_rate: i.serverHitRate,
      cached_tokens_mismatched: sums.reported === 0 ? null : cache.mismatched,
      cached_tokens_by_tier: tiers.cachedTokensByTier,
      ttft_by_tier: tiers.ttftByTier,
      cache_check: cache.status,
      flush_verified: i.flushVerified,
      warm_cached_tokens: i.warmCachedTokens,
    },
    pressure,
    health: clientHealthKeys(i.health),
    timeline: { steady_state: steadyState(recs), timeline: buildTimeline(recs) },
    provenance: provenance(ctx, i.startedAt),
  });
  return { record, problems: cache.problems };
}

/**
 * What the cache must hold for every turn of the round to hit: each system prompt in use once, and each
 * conversation's history beyond it.
 */
function workingSetTokens(turns: readonly TurnResult[], systemTokens: number): number {
  const systems = new Set(turns.map((t) => t.plan.systemIndex));
  let tokens = systemTokens > 0 ? systems.size * systemTokens : 0;
  for (const t of turns) tokens += t.plan.historyLen - systemTokens;
  return tokens;
}

/**
 * What a turn should report cached where nothing is evicted (the line's expected_cached_tokens): the cache model's
 * ceiling on the server that served it, what an infinite cache could give (an approximate turn, whose history holds an
 * answer re-tokenized from text, may also find the whole history, as its plan expects). Without the model (a cache per
 * slot whose turns named no slot, or pages unknown): the plan's page-aligned history.
 */
function expectedOf(ranges: ((plan: TurnPlan) => RequestExpectation | undefined) | null): (plan: TurnPlan) => number {
  return (plan) => {
    const x = ranges?.(plan);
    if (x === undefined) return plan.expectedCachedTokens;
    return plan.approximate ? Math.max(x.infinitePossible, plan.expectedCachedTokens) : x.infinitePossible;
  };
}

/** A round's cached tokens, summed: expected over its answered turns, observed over those that reported them. */
interface TurnSums {
  reported: number;
  expectedSum: number;
  observedSum: number | null;
  reportedPromptSum: number;
}

function turnSums(turns: readonly TurnResult[], expectedOf: (plan: TurnPlan) => number): TurnSums {
  let reported = 0;
  let expectedSum = 0;
  let observedSum = 0;
  let reportedPromptSum = 0;
  for (const { plan, rec } of turns) {
    if (!rec.ok) continue;
    expectedSum += expectedOf(plan);
    if (rec.cachedTokens < 0) continue;
    reported++;
    observedSum += rec.cachedTokens;
    reportedPromptSum += plan.promptLen;
  }
  return { reported, expectedSum, observedSum: reported === 0 ? null : observedSum, reportedPromptSum };
}

/**
 * A turn's allowed cached tokens: the cache model's range on the server that served it; an approximate turn (its
 * history holds an answer re-tokenized from text) may also find the whole history, as its plan expects. Without the
 * model (a cache per slot): exactly the plan's expectation, or for an approximate turn at least its exact part.
 */
function rangesOf(ranges: ((plan: TurnPlan) => RequestExpectation | undefined) | null): (plan: TurnPlan) => readonly [number, number] | null {
  return (plan) => {
    if (ranges === null) return plan.approximate ? [plan.minCachedTokens, Infinity] : [plan.expectedCachedTokens, plan.expectedCachedTokens];
    const x = ranges(plan);
    // No server is known for it (a router that named none): it is no evidence either way.
    if (x === undefined) return null;
    return plan.approximate ? [Math.min(x.guaranteed, plan.minCachedTokens), Math.max(x.possible, plan.expectedCachedTokens)] : [x.guaranteed, x.possible];
  };
}
