/** One StreamRequest of the sweep: the run's URL, headers, timeouts and interrupt around a prepared body. */
import type { StreamRequest } from "../client/stream.ts";
import type { SweepContext } from "./context.ts";

export interface RequestShape {
  /** Prompt index within its pct; negative for control requests (canary, probe, warm). */
  index: number;
  promptLen: number;
  maxNewTokens: number;
  /** Sent as x-request-id (--request-details joins on it). */
  requestId?: string;
}

export function streamRequestFor(ctx: SweepContext, body: readonly Uint8Array[], shape: RequestShape): StreamRequest {
  return {
    url: ctx.opts.baseUrl + ctx.backend.generatePath,
    backend: ctx.backend,
    body,
    headers: ctx.ctl.headers,
    requestId: shape.requestId,
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
