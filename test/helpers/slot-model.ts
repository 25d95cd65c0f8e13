/**
 * The slot cache model (src/metrics/slot-cache-model.ts, through expectPoint) over a run's --request-details, for the
 * tests against servers with one prompt cache per slot (llama.cpp, real or mocked): each request's send, first token
 * and end come from its details, its prompt from what the workload is (a sweep's prefix and suffix, a conversation's
 * turns), and every slot holds what the engine warmed it with. Returns each request's [guaranteed, possible].
 */
import { UNKNOWN_BEHAVIOUR } from "../../src/config/cache-behaviour.ts";
import type { CacheSequence } from "../../src/metrics/cache-model.ts";
import { expectPoint } from "../../src/metrics/point-expectations.ts";
import type { RequestRecord } from "../../src/schema/record.ts";
import { makeRecord } from "./record.ts";

export type Range = readonly [number, number];

/** The record the model reads of one details line (times on the client's clock). */
function recordOf(d: any, index: number): RequestRecord {
  const start = d.start_epoch_ms as number;
  const got = d.ok && d.ttft_ms !== null && d.ttft_ms !== undefined;
  return makeRecord({
    index,
    ok: d.ok,
    startMs: start,
    firstTokenMs: got ? start + d.ttft_ms : 0,
    lastEventMs: start + d.latency_ms,
    latencyMs: d.latency_ms,
    outputLen: d.output_len,
    cachedTokens: d.cached_tokens,
  });
}

function ranges(details: readonly any[], sequenceOf: (d: any) => CacheSequence, finishedOf: (d: any) => CacheSequence, held: (CacheSequence | null)[]) {
  const out = new Map<string, Range>();
  const model = expectPoint({
    sequenceOf: (i) => sequenceOf(details[i]),
    finishedOf: (i) => finishedOf(details[i]),
    records: details.map(recordOf),
    serverOf: () => 0,
    servers: [{ capacityTokens: null, prior: held.filter((h) => h !== null), slots: held }],
    pageSize: 1,
    blockSize: 1,
    behaviour: UNKNOWN_BEHAVIOUR,
  });
  details.forEach((d, i) => {
    const x = model.get(i);
    if (x !== undefined) out.set(d.request_id, [x.guaranteed, x.possible]);
  });
  return out;
}

const PREFIX = 1;
const OWN = 1_000_000;

/**
 * A sweep's points on one server: each pct flushed, then every slot warmed with the prefix (none at pct 0: each slot
 * then holds only the flush's probe, which shares nothing); prompt = the prefix, then a suffix of its own.
 */
export function sweepSlotRanges(details: readonly any[], slots: number, prefixOf: (pct: number) => number): Map<string, Range> {
  const out = new Map<string, Range>();
  for (const pct of new Set(details.map((d) => d.pct))) {
    const mine = details.filter((d) => d.pct === pct);
    const p = prefixOf(pct);
    const seq = (d: any, length: number): CacheSequence =>
      p === 0 ? { hashIds: [OWN + d.index], ends: [length], length } : { hashIds: [PREFIX, OWN + d.index], ends: [p, length], length };
    const held = Array.from(
      { length: slots },
      (_, s): CacheSequence => (p === 0 ? { hashIds: [OWN - 1 - s], ends: [1], length: 1 } : { hashIds: [PREFIX], ends: [p], length: p }),
    );
    for (const [id, r] of ranges(
      mine,
      (d) => seq(d, d.prompt_len),
      (d) => seq(d, d.prompt_len + Math.max(0, d.output_len - 1)),
      held,
    ))
      out.set(id, r);
  }
  return out;
}

/**
 * Conversations on one server: every slot warmed with the one shared system prompt; turn k of a client sends its
 * history (the system prompt, then each earlier turn and its whole answer) and a new turn of its own, and leaves the
 * answer but its last token in its slot.
 */
export function conversationSlotRanges(details: readonly any[], slots: number, systemTokens: number): Map<string, Range> {
  const byTurn = new Map(details.map((d) => [`${d.client}/${d.round}`, d]));
  /** Segments of client c up to turn k's prompt (user turn k included), with their ends. */
  const chain = (c: number, k: number): { ids: number[]; ends: number[] } => {
    const ids = [PREFIX];
    const ends = [systemTokens];
    for (let j = 0; j <= k; j++) {
      const turn = byTurn.get(`${c}/${j}`);
      if (turn === undefined) throw new Error(`no details for client ${c} round ${j}`);
      ids.push(OWN + 1000 * c + 2 * j);
      ends.push(turn.prompt_len);
      if (j < k) {
        ids.push(OWN + 1000 * c + 2 * j + 1);
        ends.push(turn.prompt_len + turn.output_len);
      }
    }
    return { ids, ends };
  };
  const held = Array.from({ length: slots }, (): CacheSequence => ({ hashIds: [PREFIX], ends: [systemTokens], length: systemTokens }));
  return ranges(
    details,
    (d) => {
      const c = chain(d.client, d.round);
      return { hashIds: c.ids, ends: c.ends, length: d.prompt_len };
    },
    (d) => {
      const c = chain(d.client, d.round);
      const length = d.prompt_len + Math.max(0, d.output_len - 1);
      return { hashIds: [...c.ids, OWN + 1000 * d.client + 2 * d.round + 1], ends: [...c.ends, length], length };
    },
    held,
  );
}
