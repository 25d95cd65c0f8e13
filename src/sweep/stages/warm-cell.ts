/**
 * Stage: what the engine warms for a cell: the shared prefix alone, with one output token, so every measured request
 * can hit it: once for a server with one shared cache, once per slot (pinned) for a server with one cache per slot
 * (llama.cpp), where a request reuses only what the slot it lands on holds; with a working set, each of its prefixes
 * in turn (the first warmed is then the least recently used).
 */
import { log } from "../../log.ts";
import { cacheSlotsOf } from "../../engine/reset-cache.ts";
import { warm, type WarmRequest, type WarmResult } from "../../engine/warm.ts";
import type { SweepContext } from "../context.ts";
import type { CellPlan } from "../plan.ts";
import type { PromptBatch } from "./build-prompts.ts";

/** `only`: the working set's prefixes to warm (a replica warms those the router may send it); all when absent. */
export async function warmCell(plan: CellPlan, batch: PromptBatch, ctx: SweepContext, only?: readonly number[]): Promise<WarmResult> {
  const slots = cacheSlotsOf(ctx.server);
  if (batch.warmBody(0, null) === null) return { cachedTokens: null, requests: 0 };
  const prefixes = only ?? batch.prefixes.map((_, i) => i);
  const which = prefixes.length > 1 ? `${prefixes.length} prefixes of ` : "";
  const where = slots.length > 1 ? ` on each of the server's ${slots.length} slots` : "";
  const replica = ctx.replicas === undefined ? "" : ` on ${ctx.opts.baseUrl}`;
  log.info(`Warming shared prefix only (${which}${plan.prefixLen} tokens)${where}${replica} ...`);
  function* requests(): Generator<WarmRequest> {
    for (const prefix of prefixes) for (const slot of slots) yield { body: batch.warmBody(prefix, slot)!, promptLen: plan.prefixLen };
  }
  return warm(ctx, requests(), {
    during: "during the warm request",
    failed: (why) => `Warmup failed - Please make sure benchmark arguments are correctly specified. Error: ${why}`,
  });
}
