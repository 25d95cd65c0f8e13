/**
 * The evidence block of a measured line, built here and only here from the line's records: how many samples each
 * metric family has, how many requests were planned, sent and finished, whether the offered load was carried, the
 * cache proof, the client's health and the runs it measured. Every verdict reads it through evidence-check.ts.
 */
import type { RequestRecord } from "../schema/record.ts";
import type { LineEvidence } from "../schema/nested.ts";
import { peakOverlap } from "./peak-overlap.ts";

/** Relative slack of "the load was sustained": the sends' span may exceed the schedule's by this share... */
const LOAD_TOLERANCE = 0.05;
/** ...or by this much, whichever is more (Bun's timers fire on whole milliseconds; one loop turn on a busy box). */
const LOAD_SLACK_MS = 10;

export interface EvidenceInput {
  records: readonly RequestRecord[];
  planned: number;
  interrupted: boolean;
  /** The line's request rate; Infinity in a closed loop. */
  offeredRequestRate: number;
  maxConcurrency: number;
  /** Judge the load (false for a multi-turn round, whose load is its conversations'). */
  judgeLoad: boolean;
  flushProven: boolean | null;
  warmProven: boolean | null;
  perRequest: LineEvidence["cache"]["per_request"];
  saturated: boolean;
  runIds: readonly string[];
  /** The samples of the engine's studies, by name (`fidelity`: answers compared; `ledger`: requests in the hit-loss ledger); absent ones were not run. */
  studySamples?: Readonly<Record<string, number>>;
}

/** The most requests in flight at once (a request is in flight from its send to its last event). */
const peakInFlight = (records: readonly RequestRecord[]): number =>
  peakOverlap(records.map((r) => ({ startMs: r.startMs, endMs: r.lastEventMs > 0 ? r.lastEventMs : r.startMs + Math.max(0, r.latencyMs) })));

function load(input: EvidenceInput): LineEvidence["load"] {
  const { records } = input;
  const open = Number.isFinite(input.offeredRequestRate);
  const achievedConcurrency = records.length > 0 ? peakInFlight(records) : null;
  if (open) {
    let firstIntended = Infinity,
      lastIntended = -Infinity,
      firstStart = Infinity,
      lastStart = -Infinity;
    for (const r of records) {
      firstIntended = Math.min(firstIntended, r.intendedMs);
      lastIntended = Math.max(lastIntended, r.intendedMs);
      firstStart = Math.min(firstStart, r.startMs);
      lastStart = Math.max(lastStart, r.startMs);
    }
    const intendedSpanMs = lastIntended - firstIntended;
    const sentSpanMs = lastStart - firstIntended;
    // Carried load is successful load: the send rate scaled by the share of the sends that finished (a server
    // failing every other request carries half what was sent).
    const ok = records.reduce((n, r) => n + (r.ok ? 1 : 0), 0);
    const achieved = records.length > 1 && lastStart > firstStart ? (((records.length - 1) / ((lastStart - firstStart) / 1000)) * ok) / records.length : null;
    const sustained = !input.judgeLoad || records.length === 0 ? null : sentSpanMs <= intendedSpanMs + Math.max(intendedSpanMs * LOAD_TOLERANCE, LOAD_SLACK_MS);
    return {
      offered_request_rate: input.offeredRequestRate,
      achieved_request_rate: achieved,
      offered_concurrency: null,
      achieved_concurrency: achievedConcurrency,
      sustained,
    };
  }
  // --max-concurrency 0: every request at once.
  const offered = input.maxConcurrency === 0 ? input.planned : Math.min(input.maxConcurrency, input.planned);
  const sustained = !input.judgeLoad || achievedConcurrency === null ? null : achievedConcurrency >= Math.min(offered, records.length);
  return { offered_request_rate: null, achieved_request_rate: null, offered_concurrency: offered, achieved_concurrency: achievedConcurrency, sustained };
}

export function buildEvidence(input: EvidenceInput): LineEvidence {
  let finished = 0,
    tpot = 0,
    itl = 0;
  for (const r of input.records) {
    if (!r.ok) continue;
    finished += 1;
    if (r.outputLen > 1) tpot += 1;
    itl += r.itlMs.length;
  }
  const sent = input.records.length;
  return {
    samples: {
      ttft: finished,
      tpot,
      itl,
      e2e: finished,
      from_intended: finished,
      schedule_lag: sent,
      ...input.studySamples,
    },
    requests: { planned: input.planned, sent, finished },
    complete: !input.interrupted && sent >= input.planned,
    load: load(input),
    cache: { flush_proven: input.flushProven, warm_proven: input.warmProven, per_request: input.perRequest },
    client_healthy: !input.saturated,
    run_ids: [...input.runIds],
  };
}
