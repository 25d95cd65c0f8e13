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
import type { PctPlan } from "../plan.ts";
import type { PromptBatch } from "./build-prompts.ts";

export async function warmCell(plan: PctPlan, batch: PromptBatch, ctx: SweepContext): Promise<WarmResult> {
  const slots = cacheSlotsOf(ctx.server);
  if (batch.warmBody(0, null) === null) return { cachedTokens: null, requests: 0 };
  const which = batch.prefixes.length > 1 ? `${batch.prefixes.length} prefixes of ` : "";
  const where = slots.length > 1 ? ` on each of the server's ${slots.length} slots` : "";
  log.info(`Warming shared prefix only (${which}${plan.prefixLen} tokens)${where} ...`);
  function* requests(): Generator<WarmRequest> {
    for (let prefix = 0; prefix < batch.prefixes.length; prefix++) for (const slot of slots) yield { body: batch.warmBody(prefix, slot)!, promptLen: plan.prefixLen };
  }
  return warm(ctx, requests(), {
    during: "during the warm request",
    failed: (why) => `Warmup failed - Please make sure benchmark arguments are correctly specified. Error: ${why}`,
  });
}
