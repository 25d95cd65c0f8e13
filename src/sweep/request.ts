/** One StreamRequest of a run: the run's URL, headers, timeouts and interrupt around a prepared body. */
import type { RequestBody } from "../client/request-body.ts";
import type { StreamRequest } from "../client/stream.ts";
import type { RunOptions } from "../config/options.ts";
import type { SweepContext } from "./context.ts";

/** What a request needs of its run (the sweep's context, or a multi-turn run's). */
export type RequestContext = Pick<SweepContext, "backend" | "ctl" | "io"> & {
  opts: Pick<RunOptions, "baseUrl" | "requestTimeoutS" | "stallTimeoutS">;
  server: Pick<SweepContext["server"], "textMode">;
};

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

export function streamRequestFor(ctx: RequestContext, body: RequestBody, shape: RequestShape): StreamRequest {
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
