/**
 * An agentic replay's line: one for the whole replay (its sessions interleave, so trace-time windows would cut them),
 * made by the engine's summarizePoint with every measured request's predicted range as its expectation, then the
 * replay's own keys (as a Mooncake replay's) and the agentic ones: the schedule's rules and the session-level metrics.
 */
import type { Measurement } from "../engine/measure.ts";
import type { StudyResult } from "../engine/point-plan.ts";
import type { CacheReset } from "../engine/reset-cache.ts";
import type { RequestExpectation } from "../metrics/point-expectations.ts";
import type { WarmResult } from "../engine/warm.ts";
import { summarizePoint, type PointSpec, type SummaryContext } from "../engine/summarize.ts";
import type { SweepLine } from "../metrics/sweep-line.ts";
import type { ScheduledRequest } from "../workload/agentic/session-schedule.ts";
import { agenticKeys } from "./agentic-metrics.ts";
import { totals, type CheckedRequest } from "./check.ts";
import type { AgenticRules } from "./options.ts";

export interface AgenticLineInput {
  m: Measurement;
  requests: ReadonlyMap<number, ScheduledRequest>;
  checked: ReadonlyMap<number, CheckedRequest>;
  /** Requests each session (replay instance) has, by instance: a session is complete when all of them ended. */
  plannedPerSession: ReadonlyMap<number, number>;
  reset: CacheReset;
  /** Each request's range from the one cache model (null: it does not apply). */
  ranges: ReadonlyMap<number, RequestExpectation> | null;
  /** The capacity the model evicted at where it is not the server's (--cache-tokens). */
  modelCapacityTokens: number | undefined;
  /** The engine's warm of the point (an agentic replay's warm-up is its own requests, not a warm). */
  warm: WarmResult;
  rules: Omit<AgenticRules, "traceFormat" | "sessions"> & { traceFormat: string; lanes: number; sessions: number; timeScale: number };
  blockSize: number;
  warmupRequests: number;
  /** Distinct prompt tokens of the replayed sessions. */
  workingSetTokens: number;
  idsHash: string;
  summary: SummaryContext;
  studies: readonly StudyResult[];
}

export function agenticLine(i: AgenticLineInput): SweepLine {
  const records = i.m.records;
  const checked = records.map((r) => i.checked.get(r.index)!).filter((c) => c !== undefined);
  const t = totals(checked);
  const input = records.reduce((a, r) => a + r.promptLen, 0);
  const reportedInput = records.filter((r) => r.ok && r.cachedTokens >= 0).reduce((a, r) => a + r.promptLen, 0);
  const promptLen = records.length > 0 ? Math.round(input / records.length) : 0;
  const typical = t.checked > 0 ? Math.round(t.expectedLowerTokens / t.checked) : 0;
  const range = (index: number) => {
    const c = i.checked.get(index);
    return c === undefined || c.verdict === "unjudged" ? null : ([c.lower, c.upper] as const);
  };
  const rate = i.m.durationS > 0 ? records.length / i.m.durationS : 0;
  const r = i.rules;
  const spec: PointSpec = {
    axes: {
      shared_prefix_pct: Math.round((reportedInput > 0 ? t.expectedInfiniteTokens / reportedInput : 0) * 100),
      working_set: 1,
      request_rate: rate,
    },
    prefixLen: typical,
    suffixLen: promptLen - typical,
    promptLen,
    numPrompts: [...i.plannedPerSession.values()].reduce((a, n) => a + n, 0),
    workingSetTokens: i.workingSetTokens,
    promptIdsHash: i.idsHash,
    expected: { typical, perPrompt: range },
    warmProvesFlush: false,
    promptDrift: null,
    first: true,
    ttftFitSoFar: null,
    studies: i.studies,
    // The pressure keys from the one cache model's ranges, as a sweep line's; the hit ratios are the replay's own.
    ranges: i.ranges,
    modelCapacityTokens: i.modelCapacityTokens,
    producerOwns: ["expected_hit_ratio", "observed_hit_ratio"],
    producerKeys: {
      expected_hit_ratio: reportedInput > 0 ? t.expectedLowerTokens / reportedInput : 0,
      observed_hit_ratio: reportedInput > 0 ? t.observedTokens / reportedInput : null,
      block_size: i.blockSize,
      time_scale: r.timeScale,
      infinite_hit_ratio: reportedInput > 0 ? t.expectedInfiniteTokens / reportedInput : 0,
      predicted_eviction_tokens: t.predictedEvictionTokens,
      observed_shortfall_tokens: t.observedShortfallTokens,
      cache_short_requests: t.short,
      cache_over_requests: t.over,
      agentic: {
        trace_format: r.traceFormat,
        delay_rule: r.delay,
        spawn_rule: r.spawn,
        join_rule: r.join,
        max_idle_s: r.maxIdleS,
        lanes: r.lanes,
        sessions: r.sessions,
        start_at: r.startAt,
        warmup_requests: i.warmupRequests,
        ...agenticKeys(records, i.requests, i.checked, i.plannedPerSession, i.m.durationS),
      },
    },
  };
  return summarizePoint(spec, i.reset, i.warm, i.m, i.summary).record;
}
