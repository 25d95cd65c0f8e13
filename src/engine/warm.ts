/**
 * The engine's warm: send what every measured request should then hit, each with one output token, in the order
 * given, and report what the warm requests found cached (after a working flush: nothing). The producer says what
 * to warm (the sweep: each prefix of its working set on each cache slot, pinned, for a server with one cache per
 * slot; multi-turn: each system prompt); a failed warm stops the run, since nothing after it would be measured warm.
 */
import { BenchError } from "../errors.ts";
import type { RequestBody } from "../client/request-body.ts";
import { sendControl, type RequestContext } from "./request.ts";

export interface WarmResult {
  /**
   * Cached tokens the warm requests found (0 after a working flush; the most any of them found); -1 unreported;
   * null: nothing to warm (an empty prefix).
   */
  cachedTokens: number | null;
  /** Warm requests sent. */
  requests: number;
}

/** One warm request: its body (max 1 new token) and its prompt's length. */
export interface WarmRequest {
  body: RequestBody;
  promptLen: number;
}

/** How the producer names a warm that did not go through. */
export interface WarmWording {
  /** Where an interrupt stopped it: "during the warm request". */
  during: string;
  /** The error for a warm request that failed, given "kind: message". */
  failed: (why: string) => string;
}

export async function warm(ctx: RequestContext, requests: Iterable<WarmRequest>, say: WarmWording): Promise<WarmResult> {
  let cachedTokens: number | null = null;
  let sent = 0;
  for (const r of requests) {
    sent++;
    const rec = await sendControl(ctx, r.body, { index: -1, promptLen: r.promptLen }, say.during);
    if (!rec.ok) throw new BenchError(say.failed(`${rec.failureKind}: ${rec.failureMessage}`));
    cachedTokens = Math.max(cachedTokens ?? -1, rec.cachedTokens);
  }
  return { cachedTokens, requests: sent };
}
