/**
 * Cache resets. GET|POST /flush_cache as SGLang >= 0.5.10 (docs/protocol.md §2.1): flush only when nothing
 * is running or queued; with ?timeout=S wait up to S seconds for that; one flush at a time.
 * POST /reset_prefix_cache as vLLM with VLLM_SERVER_DEV_MODE=1 (§3.3): 200 {"success": bool}.
 * --flush-fail-first and --flush-lies make both misbehave.
 */
import type { ServerResponse } from "node:http";
import type { MockContext } from "./context.ts";
import { sendBadRequest, sendJson, sendText } from "./http.ts";

/** SGLang's exact success body. */
const FLUSH_SUCCESS_TEXT =
  "Cache flushed.\nPlease check backend logs for more details. " + "(When there are running or waiting requests, the operation will not be performed.)\n";

const BUSY_TEXT = "Flush cache failed.\n";

/** Serve one /flush_cache request; `timeoutParam` is the raw ?timeout= value (null if absent). */
export async function handleFlush(res: ServerResponse, timeoutParam: string | null, ctx: MockContext): Promise<void> {
  const timeoutS = timeoutParam === null || timeoutParam === "" ? 0 : Number(timeoutParam);
  if (!Number.isFinite(timeoutS) || timeoutS < 0) {
    sendBadRequest(res, `timeout: Input should be greater than or equal to 0 (got ${JSON.stringify(timeoutParam)})`);
    return;
  }
  if (ctx.faults.flushShouldFail()) {
    ctx.faults.note("flush-fail");
    reject(res, ctx, BUSY_TEXT);
    return;
  }
  if (ctx.flushInProgress) {
    reject(res, ctx, "Another flush_cache is already in progress.");
    return;
  }
  if (!ctx.scheduler.isIdle()) {
    if (timeoutS === 0) {
      reject(res, ctx, BUSY_TEXT);
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
  clearCache(ctx);
  sendText(res, 200, FLUSH_SUCCESS_TEXT);
}

/** Serve one POST /reset_prefix_cache (vLLM dev mode): success false while requests hold the cache. */
export function handleResetPrefixCache(res: ServerResponse, ctx: MockContext): void {
  if (ctx.faults.resetShouldFail()) {
    ctx.faults.note("reset-prefix-fail");
    ctx.counters.flushRejected++;
    sendJson(res, 200, { success: false });
    return;
  }
  if (!ctx.scheduler.isIdle()) {
    ctx.counters.flushRejected++;
    sendJson(res, 200, { success: false });
    return;
  }
  clearCache(ctx);
  sendJson(res, 200, { success: true });
}

/** Count a successful flush; empty the cache unless --flush-lies. */
function clearCache(ctx: MockContext): void {
  ctx.counters.flushes++;
  if (ctx.opts.flushLies) ctx.faults.note("flush-lie");
  else ctx.cache.clear();
}

function reject(res: ServerResponse, ctx: MockContext, message: string): void {
  ctx.counters.flushRejected++;
  sendText(res, 400, message);
}
