/**
 * Each round's expectations from the one cache model (metrics/cache-model.ts), and with several replicas its hit-loss
 * ledger. A turn's history was cached where its earlier turns ran, so a round is modelled over every turn so far
 * (their pages, chained hashes of their ids; each turn's end caches its prompt and its answer but the last token, as
 * the next turn sends them) and reported for the round's turns; the system prompts were warmed before round 0.
 */
import { UNKNOWN_BEHAVIOUR } from "../config/cache-behaviour.ts";
import type { CacheSequence } from "../metrics/cache-model.ts";
import { hitLedger, type HitLedger } from "../metrics/hit-ledger.ts";
import { pageChainHashes } from "../metrics/page-hashes.ts";
import { expectPoint, modelCapacityOf, type RequestExpectation } from "../metrics/point-expectations.ts";
import type { RequestRecord } from "../schema/record.ts";
import type { MultiturnContext } from "./context.ts";
import type { TurnResult } from "./summarize-round.ts";
import { turnIdsText, turnKey } from "./turns.ts";

export interface RoundCache {
  /** Each of the round's turns' expected cached range, by turn key; null where the model does not apply. */
  ranges: Map<number, RequestExpectation> | null;
  /** Several replicas: the round's ledger (its turns only); null with one server. */
  ledger: HitLedger | null;
}

export class RoundModel {
  private readonly prompts = new Map<number, CacheSequence>();
  private readonly finished = new Map<number, CacheSequence>();
  private readonly records: RequestRecord[] = [];
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

  round(turns: readonly TurnResult[]): RoundCache {
    const { opts, server } = this.ctx;
    const page = server.pageSize;
    const keys: number[] = [];
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
      const prevRec = prevKey === null ? undefined : this.records.find((r) => r.index === prevKey);
      if (prev !== undefined && prevRec !== undefined && !t.plan.approximate) {
        const cached = Math.min(ids.length, prev.length + Math.max(1, prevRec.outputLen) - 1);
        this.finished.set(prevKey!, { hashIds: pageChainHashes(ids.slice(0, cached), page), length: cached });
      }
      this.records.push({ ...t.rec, index: key });
      keys.push(key);
    }
    const set = this.ctx.replicas;
    const router = this.ctx.router;
    const behaviour = opts.serverCache ?? UNKNOWN_BEHAVIOUR;
    const common = {
      sequenceOf: (key: number) => this.prompts.get(key),
      finishedOf: (key: number) => this.finished.get(key),
      records: this.records,
      pageSize: page,
      blockSize: page,
      behaviour,
    };
    const mine = new Set(keys);
    // A server with a cache per slot (llama.cpp) keeps what its slot last held: the engine pins and proves it. Nor does
    // the check apply where a turn's pages are unknown: each round's plan then says what the history should find.
    const checked = (server.cacheSlots === null || server.cacheSlots === undefined) && !this.blind;
    if (!checked && (set === undefined || router === undefined)) return { ranges: null, ledger: null };
    const all =
      set === undefined || router === undefined
        ? expectPoint({ ...common, serverOf: () => 0, servers: [{ capacityTokens: modelCapacityOf(server.info), prior: this.warmed }] })
        : expectPoint({
            ...common,
            serverOf: (key) => router.assigned.get(key) ?? null,
            servers: set.servers.map((s) => ({ capacityTokens: modelCapacityOf(s.info), prior: this.warmed })),
          });
    const ranges = checked ? new Map([...all].filter(([key]) => mine.has(key))) : null;
    if (set === undefined || router === undefined) return { ranges, ledger: null };
    const ledger = hitLedger({
      ...common,
      replicaOf: (key) => router.assigned.get(key) ?? null,
      homeKeyOf: (key) => key % opts.numClients,
      replicas: set.urls.map((url, r) => ({ url, capacityTokens: modelCapacityOf(set.servers[r]!.info), warmed: this.warmed })),
      reports: (key) => mine.has(key),
    });
    return { ranges, ledger };
  }
}
