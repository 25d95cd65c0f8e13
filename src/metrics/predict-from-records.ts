/**
 * Every request's predicted cache hit, made from what the client saw before it sent it: the records' own client
 * timestamps are replayed in order (a send at startMs, a finished prefill at firstTokenMs, an end at lastEventMs),
 * so the predictor (hit-predictor.ts) sees exactly the requests whose first token had arrived, and those still in
 * flight, at each send. Doing it from the records keeps the hot path free of it and gives the same answer. Pure.
 */
import type { RequestRecord } from "../schema/record.ts";
import type { BlockPrompt } from "./block-prompt.ts";
import { Predictor, type Prediction, type PredictorOptions } from "./hit-predictor.ts";

type Event = { atMs: number; order: number; index: number; kind: "send" | "first" | "end" };
/** At one instant a send goes before a first token: the request that just finished counts as still in flight. */
const ORDER = { send: 0, first: 1, end: 2 } as const;

/**
 * `cachedBefore`: prompts the cache holds before the first send (a warm), each with an index no request has; they
 * count as finished prefills from the start.
 */
export function predictFromRecords(
  requests: ReadonlyArray<BlockPrompt | undefined>,
  records: readonly RequestRecord[],
  o: PredictorOptions,
  cachedBefore: readonly BlockPrompt[] = [],
): Map<number, Prediction> {
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
  for (const w of cachedBefore) {
    p.onSend(w);
    p.onFirstToken(w);
    p.onFinish(w, 1);
  }
  const out = new Map<number, Prediction>();
  for (const e of events) {
    const req = requests[e.index];
    if (req === undefined) continue;
    if (e.kind === "send") out.set(e.index, p.onSend(req));
    else if (e.kind === "first") p.onFirstToken(req);
    else if (byIndex.get(e.index)!.firstTokenMs > 0) p.onFinish(req, byIndex.get(e.index)!.outputLen);
    else p.onFailBeforeFirstToken(req);
  }
  return out;
}
