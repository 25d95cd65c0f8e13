/** Stage: send the shared prefix alone, once, with one output token, so every measured request can hit it. */
import { BenchError } from "../../errors.ts";
import { interruptedError } from "../../interrupt.ts";
import { log } from "../../log.ts";
import { streamRequest } from "../../client/stream.ts";
import type { SweepContext } from "../context.ts";
import type { PctPlan } from "../plan.ts";
import { streamRequestFor } from "../request.ts";
import type { PromptBatch } from "./build-prompts.ts";

export interface WarmResult {
  /** Cached tokens the warm request itself found (0 after a working flush); -1 unreported; null: no warm (pct 0). */
  cachedTokens: number | null;
}

export async function warmPrefix(plan: PctPlan, batch: PromptBatch, ctx: SweepContext): Promise<WarmResult> {
  if (batch.warmBody === null) return { cachedTokens: null };
  log.info(`Warming shared prefix only (${plan.prefixLen} tokens) ...`);
  const warm = await streamRequest(streamRequestFor(ctx, batch.warmBody, { index: -1, promptLen: plan.prefixLen, maxNewTokens: 1 }));
  if (!warm.ok) {
    if (warm.failureKind === "cancelled") throw interruptedError("during the warm request");
    throw new BenchError(
      `Warmup failed - Please make sure benchmark arguments are correctly specified. Error: ${warm.failureKind}: ${warm.failureMessage}`,
    );
  }
  return { cachedTokens: warm.cachedTokens };
}
