/**
 * GET|POST /flush_cache as SGLang >= 0.5.10 (protocol.md §2.1): flush only when nothing is running
 * or queued; with ?timeout=S wait up to S seconds for that; one flush at a time.
 */
import type { ServerResponse } from "node:http";
import { sendBadRequest, sendText } from "./http.ts";
import type { PrefixCache } from "./prefix-cache.ts";
import type { MockScheduler } from "./scheduler.ts";
import type { MockCounters } from "./types.ts";

/** SGLang's exact success body. */
export const FLUSH_SUCCESS_TEXT =
  "Cache flushed.\nPlease check backend logs for more details. " +
  "(When there are running or waiting requests, the operation will not be performed.)\n";

/** What the flush handler needs from the server. */
export interface FlushContext {
  scheduler: MockScheduler;
  cache: PrefixCache;
  counters: MockCounters;
  /** True while a flush is waiting for idle. */
  flushInProgress: boolean;
}

/** Serve one /flush_cache request; `timeoutParam` is the raw ?timeout= value (null if absent). */
export async function handleFlush(res: ServerResponse, timeoutParam: string | null, ctx: FlushContext): Promise<void> {
  const timeoutS = timeoutParam === null || timeoutParam === "" ? 0 : Number(timeoutParam);
  if (!Number.isFinite(timeoutS) || timeoutS < 0) {
    sendBadRequest(res, `timeout: Input should be greater than or equal to 0 (got ${JSON.stringify(timeoutParam)})`);
    return;
  }
  if (ctx.flushInProgress) {
    reject(res, ctx, "Another flush_cache is already in progress.");
    return;
  }
  if (!ctx.scheduler.isIdle()) {
    if (timeoutS === 0) {
      reject(res, ctx, "Flush cache failed.\n");
      return;
    }
    ctx.flushInProgress = true;
    const becameIdle = await ctx.scheduler.waitForIdle(timeoutS * 1000);
    ctx.flushInProgress = false;
    // A request may have arrived between the idle signal and now; the scheduler only flushes when idle.
    if (!becameIdle || !ctx.scheduler.isIdle()) {
      reject(res, ctx, "Timed out waiting for idle state.");
      return;
    }
  }
  ctx.cache.clear();
  ctx.counters.flushes++;
  sendText(res, 200, FLUSH_SUCCESS_TEXT);
}

function reject(res: ServerResponse, ctx: FlushContext, message: string): void {
  ctx.counters.flushRejected++;
  sendText(res, 400, message);
}
