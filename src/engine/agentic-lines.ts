/**
 * An agentic replay's line, made by the engine: one for the whole replay (its sessions interleave, so trace-time
 * windows would cut them), by summarizePoint with every measured request's range from the one cache model as its
 * expectation, then the replay's own keys (as a Mooncake replay's) and the agentic ones: the schedule's rules and
 * the session-level metrics; judged (--gate) and sent to the sink with each request's details (its trace line, its
 * session, lane and agent path). The producer hands, as data, what its schedule handed out and where the line goes.
 */
import type { DeclaredFields } from "../config/flags/declared-fields.ts";
import type { ClientDecl } from "../config/flags/index.ts";
import { evaluateGates } from "../gates/evaluate.ts";
import { agenticKeys } from "../metrics/agentic-metrics.ts";
import type { CheckedRequest } from "../metrics/replay-check.ts";
import type { SweepLine } from "../metrics/sweep-line.ts";
import type { Gate } from "../schema/gate.ts";
import type { ScheduledRequest } from "../workload/agentic/session-schedule.ts";
import type { CacheSequence } from "../metrics/cache-model.ts";
import type { TraceRequest } from "../workload/trace.ts";
import type { CacheReset } from "./reset-cache.ts";
import type { MeasuredPoint, PointLines, StudyResult } from "./point-plan.ts";
import { checkedLineOf, checkedRequests } from "./replay-lines.ts";
import type { ReplayLineSink } from "./sink.ts";
import { summarizePoint, type PointSpec, type SummaryContext } from "./summarize.ts";

/** The schedule's named rules (replay's flags), as the line's `agentic` group reports them. */
type AgenticRuleKeys = Pick<DeclaredFields<ClientDecl, "replay">, "delay" | "spawn" | "join" | "maxIdleS" | "startAt"> & {
  traceFormat: string;
  lanes: number;
  sessions: number;
  timeScale: number;
};

/** Everything the producer knows of an agentic replay's line once its schedule ran: what it handed out and how. */
export interface AgenticLineRecipe {
  /** Every request the schedule handed out (warm-ups too), by request id. */
  requests: ReadonlyMap<number, ScheduledRequest>;
  /** Each handed-out request's prompt as its hash-id chain. */
  chains: ReadonlyMap<number, CacheSequence & { hashIds: readonly number[] }>;
  /** The schedule's origin (nowMs clock): a request's trace time is its intended time after it. */
  originMs: number;
  /** Requests each session (replay instance) has, by instance: a session is complete when all of them ended. */
  plannedPerSession: ReadonlyMap<number, number>;
  /** The flush and its proof, made before the schedule started. */
  reset: CacheReset;
  /** The capacity the model evicted at where it is not the server's (--cache-tokens). */
  modelCapacityTokens: number | undefined;
  rules: AgenticRuleKeys;
  blockSize: number;
  warmupRequests: number;
  /** Distinct prompt tokens of the replayed sessions. */
  workingSetTokens: number;
  idsHash: string;
  summary: SummaryContext;
  gates: readonly Gate[];
  sink: ReplayLineSink;
}

/** A handed-out request as a trace's line (what its details and --dump-prompts say): its trace time is its intended send's, after the origin. */
export function asTraceRequest(s: ScheduledRequest, chain: { hashIds: readonly number[]; length: number }, originMs: number): TraceRequest {
  return {
    line: s.call.line,
    index: s.requestId,
    timestampMs: s.intendedMs - originMs,
    inputLength: chain.length,
    outputLength: s.call.outputLength,
    hashIds: chain.hashIds,
  };
}

export function agenticLines(r: AgenticLineRecipe): PointLines<SweepLine> {
  let checked = new Map<number, CheckedRequest>();
  return {
    build: (point, studies) => {
      checked = checkedRequests(point);
      return [agenticLine(r, point, checked, studies)];
    },
    judge: (line) => evaluateGates(r.gates, line),
    emit: (lines, point, detailsOf) => {
      const measured = point.measurement.records;
      const requests: TraceRequest[] = [];
      for (const m of measured) requests[m.index] = asTraceRequest(r.requests.get(m.index)!, r.chains.get(m.index)!, r.originMs);
      const extra = (index: number) => {
        const s = r.requests.get(index)!;
        return { trace_id: s.trace.id, session: s.instance, lane: s.lane, agent_path: s.agentPath, turn: s.turn, trace_at: s.call.at, ...detailsOf?.(index) };
      };
      r.sink.details(r.summary.runId, measured, requests, checked, extra);
      for (const line of lines) r.sink.line(line);
    },
  };
}

function agenticLine(i: AgenticLineRecipe, point: MeasuredPoint, byIndex: ReadonlyMap<number, CheckedRequest>, studies: readonly StudyResult[]): SweepLine {
  const records = point.measurement.records;
  const r = i.rules;
  const { promptLen, typical, range, infiniteHitRatio, keys } = checkedLineOf(records, byIndex, { blockSize: i.blockSize, timeScale: r.timeScale });
  const rate = point.measurement.durationS > 0 ? records.length / point.measurement.durationS : 0;
  const spec: PointSpec = {
    axes: {
      shared_prefix_pct: Math.round(infiniteHitRatio * 100),
      working_set: 1,
      request_rate: rate,
    },
    prefixLen: typical,
    suffixLen: promptLen - typical,
    promptLen,
    numPrompts: [...i.plannedPerSession.values()].reduce((a, n) => a + n, 0),
    workingSetTokens: i.workingSetTokens,
    promptIdsHash: i.idsHash,
    expected: { typical, perPrompt: range, hitRatios: "per-request" },
    warmProvesFlush: false,
    promptDrift: null,
    first: true,
    ttftFitSoFar: null,
    studies,
    // The pressure keys and hit ratios from the one cache model's ranges (each request's own); then the replay's keys.
    ranges: point.ranges,
    modelCapacityTokens: i.modelCapacityTokens,
    producerKeys: {
      ...keys,
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
        ...agenticKeys(records, i.requests, byIndex, i.plannedPerSession, point.measurement.durationS),
      },
    },
  };
  return summarizePoint(spec, i.reset, point.warm, point.measurement, i.summary).record;
}
