/**
 * How a multi-turn run's turns route over several replicas (a RoutePlan of engine/point-plan.ts): by conversation
 * (session), or by its system prompt (prefix) when that fills a page. The engine keeps one router for the whole run,
 * so a conversation's turns meet the history its earlier turns left.
 */
import type { RoutePlan } from "../engine/point-plan.ts";
import type { MultiturnContext } from "./context.ts";

export function conversationRoute(ctx: Pick<MultiturnContext, "opts" | "server">): RoutePlan {
  const { opts, server } = ctx;
  const systemShared = opts.sharedSystemTokens >= server.pageSize;
  return {
    keysOf: (key) => {
      const client = key % opts.numClients;
      return { session: client, prefix: systemShared ? client % opts.workingSet : null };
    },
    prefixes: systemShared ? Array.from({ length: opts.workingSet }, (_, s) => s) : [],
    prefixTokens: opts.sharedSystemTokens,
    warmedEverywhere: true,
  };
}
