/**
 * How the engine's cache model reads a round (a CacheView of src/engine/point-plan.ts). A turn's history was cached
 * where its earlier turns ran, so a round is modelled over every turn so far (their pages, chained hashes of their
 * ids; each turn's end caches its prompt and its answer but the last token, as the next turn sends them) and judged
 * for the round's own turns; the system prompts were warmed before round 0, on every server.
 */
import type { CacheSequence } from "../metrics/cache-model.ts";
import { pageChainHashes } from "../metrics/page-hashes.ts";
import type { CacheView } from "../engine/point-plan.ts";
import type { RequestRecord } from "../schema/record.ts";
import type { MultiturnContext } from "./context.ts";
import { turnIdsText, turnKey, type TurnResult } from "../workload/turn-plan.ts";

export class RoundHistory {
  private readonly prompts = new Map<number, CacheSequence>();
  private readonly finished = new Map<number, CacheSequence>();
  private readonly records: RequestRecord[] = [];
  private readonly byKey = new Map<number, RequestRecord>();
  private readonly warmed: CacheSequence[];
  /** A turn came without its ids (another process's, without --dump-prompts): the model cannot see its pages. */
  private blind = false;

  constructor(
    private readonly ctx: MultiturnContext,
    systemPrompts: readonly Uint32Array[],
  ) {
    const page = ctx.server.pageSize;
    this.warmed = systemPrompts.map((ids) => ({ hashIds: pageChainHashes(ids, page), length: ids.length }));
  }

  /** The round's turns added to the history; their records as the engine reads them (indexed by turn key). */
  add(turns: readonly TurnResult[]): RequestRecord[] {
    const { opts, server } = this.ctx;
    const page = server.pageSize;
    const mine: RequestRecord[] = [];
    for (const t of turns) {
      const key = turnKey(opts.numClients, t.plan.round, t.plan.client);
      const text = turnIdsText(t.plan);
      const ids = text === "" ? [] : text.split(",").map(Number);
      if (ids.length !== t.plan.promptLen) this.blind = true;
      this.prompts.set(key, { hashIds: pageChainHashes(ids, page), length: ids.length });
      // The server cached the previous turn's prompt and its answer but the last token: this prompt starts with them
      // - exactly so where the answer's ids are the server's own, not re-tokenized from its text.
      const prevKey = t.plan.round > 0 ? turnKey(opts.numClients, t.plan.round - 1, t.plan.client) : null;
      const prev = prevKey === null ? undefined : this.prompts.get(prevKey);
      const prevRec = prevKey === null ? undefined : this.byKey.get(prevKey);
      if (prev !== undefined && prevRec !== undefined && !t.plan.approximate) {
        const cached = Math.min(ids.length, prev.length + Math.max(1, prevRec.outputLen) - 1);
        this.finished.set(prevKey!, { hashIds: pageChainHashes(ids.slice(0, cached), page), length: cached });
      }
      const rec = { ...t.rec, index: key };
      this.records.push(rec);
      this.byKey.set(key, rec);
      mine.push(rec);
    }
    return mine;
  }

  /** The round as the model reads it; null where it has nothing to say (no ranges to judge, no ledger to keep). */
  view(): CacheView | null {
    const { opts, server } = this.ctx;
    // A server with a cache per slot (llama.cpp) is judged by the model only where it named every turn's slot (the
    // native /completion's id_slot); nor does the check apply where a turn's pages are unknown: each round's plan then
    // says what the history should find.
    const perSlot = server.cacheSlots !== null && server.cacheSlots !== undefined;
    const judged = (!perSlot || this.records.every((r) => r.slot !== undefined)) && !this.blind;
    if (!judged && this.ctx.router === undefined) return null;
    return {
      sequenceOf: (key) => this.prompts.get(key),
      finishedOf: (key) => this.finished.get(key),
      warmedSequenceOf: () => ({ hashIds: [], length: 0 }),
      homeKeyOf: (key) => key % opts.numClients,
      blockSize: server.pageSize,
      history: this.records,
      prior: this.warmed,
      slotsHeld: (slots) => {
        // The warm sent max(slots, prompts) requests, the i-th prompt i mod K pinned to slot i mod slots: each slot
        // holds the last one pinned to it.
        const held: (CacheSequence | null)[] = Array.from({ length: slots }, () => null);
        const n = this.warmed.length === 0 ? 0 : Math.max(slots, this.warmed.length);
        for (let i = 0; i < n; i++) held[i % slots] = this.warmed[i % this.warmed.length]!;
        return held;
      },
      judged,
    };
  }
}
