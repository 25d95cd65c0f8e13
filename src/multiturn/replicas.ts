/**
 * Several replicas in a multi-turn run: the turns' router (session: the conversation; prefix: its system prompt, when
 * it fills a page) and each round's hit-loss ledger. A turn's history was cached where its earlier turns ran, so the
 * ledger of a round is computed over every turn so far (their own pages, chained hashes of their ids) and reported
 * for the round's turns; the system prompts are warmed on every replica.
 */
import { ReplicaRouter, type RouteKeys } from "../engine/replica-router.ts";
import type { ReplicaSet } from "../engine/replica-set.ts";
import type { BlockPrompt } from "../metrics/block-prompt.ts";
import { hitLedger, type HitLedger } from "../metrics/hit-ledger.ts";
import { pageChainHashes } from "../metrics/page-hashes.ts";
import type { RequestRecord } from "../schema/record.ts";
import type { MultiturnContext } from "./context.ts";
import type { TurnResult } from "./summarize-round.ts";
import { turnIdsText, turnKey } from "./turns.ts";

export function conversationRouter(ctx: MultiturnContext, set: ReplicaSet): ReplicaRouter {
  const { opts, server } = ctx;
  const systemShared = opts.sharedSystemTokens >= server.pageSize;
  const keysOf = (key: number): RouteKeys => {
    const client = key % opts.numClients;
    return { session: client, prefix: systemShared ? client % opts.workingSet : null };
  };
  return new ReplicaRouter(set.urls, opts.replicas!.route, keysOf, {
    seed: opts.seed,
    via: opts.replicas!.via,
    prefixes: systemShared ? Array.from({ length: opts.workingSet }, (_, s) => s) : [],
    prefixesHeld: set.servers.map((s) =>
      s.info.cacheCapacityTokens === null || opts.sharedSystemTokens === 0 ? null : Math.floor(s.info.cacheCapacityTokens / opts.sharedSystemTokens),
    ),
    warmedEverywhere: true,
  });
}

/** Warm prompts get keys no turn has. */
const WARM_KEY = 1e12;

/** Every turn so far, as the ledger reads them; `round` adds a round's and returns that round's ledger. */
export class RoundLedger {
  private readonly prompts: BlockPrompt[] = [];
  private readonly records: RequestRecord[] = [];
  private readonly warmed: BlockPrompt[];

  constructor(
    private readonly ctx: MultiturnContext,
    private readonly set: ReplicaSet,
    systemPrompts: readonly Uint32Array[],
  ) {
    const page = ctx.server.pageSize;
    this.warmed = systemPrompts.map((ids, s) => ({ index: WARM_KEY + s, inputLength: ids.length, outputLength: 1, hashIds: pageChainHashes(ids, page) }));
  }

  round(turns: readonly TurnResult[]): HitLedger & { keys: number[] } {
    const { opts, server } = this.ctx;
    const keys: number[] = [];
    for (const t of turns) {
      const key = turnKey(opts.numClients, t.plan.round, t.plan.client);
      const ids = turnIdsText(t.plan).split(",").map(Number);
      this.prompts[key] = { index: key, inputLength: ids.length, outputLength: Math.max(1, t.rec.outputLen), hashIds: pageChainHashes(ids, server.pageSize) };
      // The server cached the previous turn's prompt and its answer but the last token: this prompt starts with them.
      const prev = t.plan.round > 0 ? this.prompts[turnKey(opts.numClients, t.plan.round - 1, t.plan.client)] : undefined;
      if (prev !== undefined) {
        const cached = Math.min(ids.length, prev.inputLength + prev.outputLength - 1);
        this.prompts[prev.index] = { ...prev, inputLength: cached, outputLength: 1, hashIds: pageChainHashes(ids.slice(0, cached), server.pageSize) };
      }
      this.records.push({ ...t.rec, index: key });
      keys.push(key);
    }
    const router = this.ctx.router!;
    const mine = new Set(keys);
    const ledger = hitLedger({
      prompts: this.prompts,
      records: this.records,
      replicaOf: (key) => router.assigned.get(key) ?? null,
      replicas: this.set.urls.map((url, r) => ({ url, capacityTokens: this.set.servers[r]!.info.cacheCapacityTokens, warmed: this.warmed })),
      pageSize: server.pageSize,
      reports: (key) => mine.has(key),
    });
    return { ...ledger, keys };
  }
}
