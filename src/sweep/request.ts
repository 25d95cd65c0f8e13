/** One StreamRequest of the sweep: the run's URL, headers, timeouts and interrupt around a prepared body. */
import type { RequestBody } from "../client/request-body.ts";
import type { StreamRequest } from "../client/stream.ts";
import type { SweepContext } from "./context.ts";

export interface RequestShape {
  /** Prompt index within its pct; negative for control requests (canary, probe, warm). */
  index: number;
  promptLen: number;
  maxNewTokens: number;
  /** Sent as x-request-id (--request-details joins on it). */
  requestId?: string;
  /** When the schedule meant it to go out (nowMs clock); the send time when absent. */
  intendedMs?: number;
}

export function streamRequestFor(ctx: SweepContext, body: RequestBody, shape: RequestShape): StreamRequest {
  return {
    url: ctx.opts.baseUrl + ctx.backend.generatePath,
    backend: ctx.backend,
    body,
    headers: ctx.ctl.headers,
    requestId: shape.requestId,
    intendedMs: shape.intendedMs,
    index: shape.index,
    promptLen: shape.promptLen,
    maxNewTokens: shape.maxNewTokens,
    textMode: ctx.server.textMode,
    requestTimeoutMs: ctx.opts.requestTimeoutS * 1000,
    stallTimeoutMs: ctx.opts.stallTimeoutS * 1000,
    signal: ctx.io.signal,
    deferText: true,
  };
}
