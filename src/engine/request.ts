/**
 * One StreamRequest of a run: the run's URL, headers, timeouts and interrupt around a prepared body; and the short
 * control requests (canary, probe, warm) the engine sends around a measurement.
 */
import { interruptedError } from "../interrupt.ts";
import type { Backend, ServerProfile } from "../backends/types.ts";
import type { Control } from "../backends/http.ts";
import type { RequestBody } from "../client/request-body.ts";
import { streamRequest } from "../client/stream.ts";
import type { StreamRequest } from "../client/stream-request.ts";
import type { RunOptions } from "../config/options.ts";
import type { RequestRecord } from "../schema/record.ts";
import type { ReplicaRouter } from "./replica-router.ts";

/** What a request needs of its run (a sweep's, a multi-turn run's, or any later producer's). */
export interface RequestContext {
  backend: Backend;
  /** Control calls (flush, metrics) with the run's headers and interrupt. */
  ctl: Control;
  /** The run's interrupt: in-flight requests are cancelled. */
  io: { signal?: AbortSignal };
  opts: Pick<RunOptions, "baseUrl" | "requestTimeoutS" | "stallTimeoutS"> & Partial<Pick<RunOptions, "maxSseLineBytes">>;
  server: Pick<ServerProfile, "textMode">;
  /** Several replicas (--base-url A,B,...): each measured request goes where the router picks. */
  router?: ReplicaRouter;
}

export interface RequestShape {
  /** Prompt index within its line; negative for control requests (canary, probe, warm). */
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
    maxSseLineBytes: ctx.opts.maxSseLineBytes,
    signal: ctx.io.signal,
    deferText: true,
  };
}

/**
 * Sends one control request (`index` -1: a warm, -2: a canary or probe) and waits for it; an interrupt ends the run
 * (`during` says where: "during the flush check"), any other failure is the caller's to judge.
 */
export async function sendControl(ctx: RequestContext, body: RequestBody, shape: Omit<RequestShape, "maxNewTokens">, during: string): Promise<RequestRecord> {
  const rec = await streamRequest(streamRequestFor(ctx, body, { ...shape, maxNewTokens: 1 }));
  if (rec.failureKind === "cancelled") throw interruptedError(during);
  return rec;
}
