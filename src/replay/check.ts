/**
 * Every replayed request's prediction, made from what the client saw before it sent it: the records' own client
 * timestamps are replayed in order (a send at startMs, a finished prefill at firstTokenMs, an end at lastEventMs),
 * so the predictor (predict.ts) sees exactly the requests whose first token had arrived, and those still in
 * flight, at each send. Doing it from the records keeps the hot path free of it and gives the same answer.
 * Then each request's observed cached tokens are judged against its range. Pure.
 */
import type { RequestRecord } from "../schema/record.ts";
import { Predictor, type Prediction, type PredictorOptions } from "./predict.ts";
import type { TraceRequest } from "./trace.ts";

/** ok: within [lower, upper]; short: below lower (unexplained); over: above upper; unreported: no cached tokens. */
export type RequestVerdict = "ok" | "short" | "over" | "unreported" | "failed";

export interface CheckedRequest extends Prediction {
  index: number;
  observed: number;
  verdict: RequestVerdict;
}

type Event = { atMs: number; order: number; index: number; kind: "send" | "first" | "end" };
/** At one instant a send goes before a first token: the request that just finished counts as still in flight. */
const ORDER = { send: 0, first: 1, end: 2 } as const;

export function predictFromRecords(requests: readonly TraceRequest[], records: readonly RequestRecord[], o: PredictorOptions): Map<number, Prediction> {
  const events: Event[] = [];
  for (const r of records) {
    events.push({ atMs: r.startMs, order: ORDER.send, index: r.index, kind: "send" });
    if (r.firstTokenMs > 0) {
      events.push({ atMs: r.firstTokenMs, order: ORDER.first, index: r.index, kind: "first" });
      events.push({ atMs: Math.max(r.lastEventMs, r.firstTokenMs), order: ORDER.end, index: r.index, kind: "end" });
    } else {
      events.push({ atMs: r.startMs + r.latencyMs, order: ORDER.end, index: r.index, kind: "end" });
    }
  }
  events.sort((a, b) => a.atMs - b.atMs || a.order - b.order || a.index - b.index);
  const byIndex = new Map(records.map((r) => [r.index, r]));
  const p = new Predictor(o);
  const out = new Map<number, Prediction>();
  for (const e of events) {
    const req = requests[e.index]!;
    if (e.kind === "send") out.set(e.index, p.onSend(req));
    else if (e.kind === "first") p.onFirstToken(req);
    else if (byIndex.get(e.index)!.firstTokenMs > 0) p.onFinish(req, byIndex.get(e.index)!.outputLen);
    else p.onFailBeforeFirstToken(req);
  }
  return out;
}

export function judge(record: RequestRecord, pred: Prediction): CheckedRequest {
  const observed = record.cachedTokens;
  const verdict: RequestVerdict = !record.ok ? "failed" : observed < 0 ? "unreported" : observed < pred.lower ? "short" : observed > pred.upper ? "over" : "ok";
  return { index: record.index, ...pred, observed, verdict };
}

/** What a set of checked requests adds up to (one window's, or the whole replay's). */
export interface CheckTotals {
  checked: number;
  ok: number;
  short: number;
  over: number;
  /** Tokens an infinite cache would have served, the model's lower bound, and what the server reported. */
  expectedInfiniteTokens: number;
  expectedLowerTokens: number;
  observedTokens: number;
  /** Hits the LRU model predicted eviction would take, and the observed shortfall below the infinite cache's. */
  predictedEvictionTokens: number;
  observedShortfallTokens: number;
}

export function totals(checked: readonly CheckedRequest[]): CheckTotals {
  const t: CheckTotals = {
    checked: 0, ok: 0, short: 0, over: 0, expectedInfiniteTokens: 0, expectedLowerTokens: 0, observedTokens: 0, predictedEvictionTokens: 0, observedShortfallTokens: 0,
  };
  for (const c of checked) {
    if (c.verdict === "failed" || c.verdict === "unreported") continue;
    t.checked++;
    t[c.verdict]++;
    t.expectedInfiniteTokens += c.infinite;
    t.expectedLowerTokens += c.lower;
    t.observedTokens += c.observed;
    t.predictedEvictionTokens += c.evictionLoss;
    t.observedShortfallTokens += Math.max(0, c.infinite - c.observed);
  }
  return t;
}
