/**
 * Several replicas in a multi-turn run: the turns' router (session: the conversation; prefix: its system prompt, when
 * it fills a page); the system prompts are warmed on every replica. Each round's cache model and ledger: round-cache.ts.
 */
import { ReplicaRouter, type RouteKeys } from "../engine/replica-router.ts";
import type { ReplicaSet } from "../engine/replica-set.ts";
import type { MultiturnContext } from "./context.ts";

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
