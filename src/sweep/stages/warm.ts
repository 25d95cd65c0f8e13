/**
 * Stage: send the shared prefix alone, once, with one output token, so every measured request can hit it; with a
 * working set, each of its prefixes in turn (the first warmed is then the least recently used).
 */
import { BenchError } from "../../errors.ts";
import { interruptedError } from "../../interrupt.ts";
import { log } from "../../log.ts";
import { streamRequest } from "../../client/stream.ts";
import type { SweepContext } from "../context.ts";
import type { PctPlan } from "../plan.ts";
import { streamRequestFor } from "../request.ts";
import type { PromptBatch } from "./build-prompts.ts";

export interface WarmResult {
  /**
   * Cached tokens the warm requests found (0 after a working flush; the most any of them found); -1 unreported;
   * null: no warm (pct 0).
   */
  cachedTokens: number | null;
}

export async function warmPrefix(plan: PctPlan, batch: PromptBatch, ctx: SweepContext): Promise<WarmResult> {
  if (batch.warmBodies.length === 0) return { cachedTokens: null };
  const which = batch.warmBodies.length > 1 ? `${batch.warmBodies.length} prefixes of ` : "";
  log.info(`Warming shared prefix only (${which}${plan.prefixLen} tokens) ...`);
  let cachedTokens = -1;
  for (const body of batch.warmBodies) {
    const warm = await streamRequest(streamRequestFor(ctx, body, { index: -1, promptLen: plan.prefixLen, maxNewTokens: 1 }));
    if (!warm.ok) {
      if (warm.failureKind === "cancelled") throw interruptedError("during the warm request");
      throw new BenchError(
        `Warmup failed - Please make sure benchmark arguments are correctly specified. Error: ${warm.failureKind}: ${warm.failureMessage}`,
      );
    }
    cachedTokens = Math.max(cachedTokens, warm.cachedTokens);
  }
  return { cachedTokens };
}
