/**
 * Stage: send the shared prefix alone, with one output token, so every measured request can hit it: once for a
 * server with one shared cache, once per slot (pinned) for a server with one cache per slot (llama.cpp), where a
 * request reuses only what the slot it lands on holds; with a working set, each of its prefixes in turn (the first
 * warmed is then the least recently used).
 */
import { BenchError } from "../../errors.ts";
import { interruptedError } from "../../interrupt.ts";
import { log } from "../../log.ts";
import { streamRequest } from "../../client/stream.ts";
import { cacheSlotsOf, type SweepContext } from "../context.ts";
import type { PctPlan } from "../plan.ts";
import { streamRequestFor } from "../request.ts";
import type { PromptBatch } from "./build-prompts.ts";

export interface WarmResult {
  /**
   * Cached tokens the warm requests found (0 after a working flush; the most any of them found); -1 unreported;
   * null: no warm (pct 0).
   */
  cachedTokens: number | null;
  /** Warm requests sent (one per cache slot). */
  requests: number;
}

export async function warmPrefix(plan: PctPlan, batch: PromptBatch, ctx: SweepContext): Promise<WarmResult> {
  const slots = cacheSlotsOf(ctx);
  if (batch.warmBody(0, null) === null) return { cachedTokens: null, requests: 0 };
  const which = batch.prefixes.length > 1 ? `${batch.prefixes.length} prefixes of ` : "";
  const where = slots.length > 1 ? ` on each of the server's ${slots.length} slots` : "";
  log.info(`Warming shared prefix only (${which}${plan.prefixLen} tokens)${where} ...`);
  let cachedTokens = -1;
  let requests = 0;
  for (let prefix = 0; prefix < batch.prefixes.length; prefix++) for (const slot of slots) {
    requests++;
    const warm = await streamRequest(streamRequestFor(ctx, batch.warmBody(prefix, slot)!, { index: -1, promptLen: plan.prefixLen, maxNewTokens: 1 }));
    if (!warm.ok) {
      if (warm.failureKind === "cancelled") throw interruptedError("during the warm request");
      throw new BenchError(
        `Warmup failed - Please make sure benchmark arguments are correctly specified. Error: ${warm.failureKind}: ${warm.failureMessage}`,
      );
    }
    cachedTokens = Math.max(cachedTokens, warm.cachedTokens);
  }
  return { cachedTokens, requests };
}
