/**
 * One streamed generation request -> one RequestRecord, for any Backend (SGLang native, OpenAI-compatible).
 * Metric definitions follow async_request_sglang_generate of bench_warm_cache.py, with the fixes of
 * docs/protocol.md §7 (TTFT keyed on the server's token count, not on text; failures inside a 200 stream are
 * failures).
 */
import type { FailureKind, RequestRecord } from "../schema/record.ts";
import { createEventFields } from "../backends/types.ts";
import { mib, readCapped, redactCredentials } from "../backends/http.ts";
import { nowMs } from "./clock.ts";
import { errorText, isConnectError } from "./fetch-errors.ts";
import { isStaleConnectionError, needsFreshConnection, noteServer } from "./connection-reuse.ts";
import { fetchBody, ReleasingBody } from "./request-body.ts";
import { createSseSplitter, MAX_SSE_LINE_BYTES } from "./sse.ts";
import { finishRecord, newStreamState, onTokenEvent, onUsageEvent, type StreamState } from "./stream-events.ts";
import { abortMessage, emptyRecord, fail, type StreamRequest } from "./stream-request.ts";

// The request's parts live by job in stream-request.ts, stream-events.ts and fetch-errors.ts; their callers import them here.

/** Sends the request and measures it; never throws, every failure is a field of the record. */
export async function streamRequest(req: StreamRequest): Promise<RequestRecord> {
  const rec = emptyRecord(req);
  const controller = new AbortController();
  // Why we aborted our own fetch; the rejection it causes is then reported as this kind.
  let abortKind: FailureKind | null = null;
  const abortWith = (kind: FailureKind): void => {
    if (abortKind !== null) return;
    abortKind = kind;
    controller.abort();
  };
  const onCancel = (): void => abortWith("cancelled");
  if (req.signal?.aborted) {
    rec.startMs = nowMs();
    rec.intendedMs = req.intendedMs ?? rec.startMs;
    if (req.body instanceof ReleasingBody) req.body.release();
    return fail(rec, "cancelled", "cancelled before start");
  }
  req.signal?.addEventListener("abort", onCancel, { once: true });

  // Stall detection: one timer per request, re-armed lazily. The hot path only stores lastByteMs; when
  // the timer fires it re-arms itself for the remaining time if bytes came meanwhile. That is exact, costs
  // nothing per chunk, and fires about once per stallTimeoutMs, unlike a periodic interval.
  const state = newStreamState(req);
  let stallTimer: ReturnType<typeof setTimeout> | undefined;
  const checkStall = (): void => {
    const idleMs = nowMs() - state.lastByteMs;
    if (idleMs >= req.stallTimeoutMs) abortWith("stall");
    else stallTimer = setTimeout(checkStall, req.stallTimeoutMs - idleMs);
  };
  stallTimer = setTimeout(checkStall, req.stallTimeoutMs);
  const requestTimer = setTimeout(() => abortWith("timeout"), req.requestTimeoutMs);

  // Everything the request needs is built before its clock starts.
  const sent = fetchBody(req.body);
  const init: RequestInit = {
    method: "POST",
    headers: sent.headers ? { ...requestHeaders(req), ...sent.headers } : requestHeaders(req),
    body: sent.body,
    signal: controller.signal,
  };
  const fresh = needsFreshConnection(req.url, state.backend.freshConnections);
  if (fresh) init.keepalive = false;
  rec.startMs = nowMs();
  rec.intendedMs = req.intendedMs ?? rec.startMs;
  try {
    let res: Response;
    try {
      res = await fetch(req.url, init);
    } catch (err) {
      // Closed by the server before any byte of the answer, on a connection that may have been a pooled one the server
      // had already closed (the client cannot tell a reused connection from a new one): the request goes once more on a
      // fresh connection, counted in the record (retried_connections), never silently. Once only: a server that resets
      // fresh connections too fails it. A body streamed from its parts has given them away; its failure stands.
      if (fresh || abortKind !== null || !(sent.body instanceof Uint8Array) || !isStaleConnectionError(err, nowMs() - rec.startMs)) throw err;
      rec.retriedConnection = true;
      res = await fetch(req.url, { ...init, keepalive: false });
    }
    noteServer(req.url, res.headers.get("server"));
    state.lastByteMs = nowMs();
    rec.httpStatus = res.status;
    if (req.servedByHeader !== undefined) rec.servedBy = res.headers.get(req.servedByHeader);
    if (res.status !== 200 || res.body === null) {
      // Only the start of an error page is kept: read that much (a page of gigabytes is not read), and never keep a
      // credential a proxy echoed back in it.
      const page = await readCapped(res, ERROR_PAGE_BYTES);
      const text = redactCredentials(new TextDecoder().decode(page.bytes), req.headers);
      fail(rec, "http", `HTTP ${res.status}: ${text.slice(0, 200)}`);
    } else {
      await readEvents(res.body, rec, state, req.headers, req.maxSseLineBytes ?? MAX_SSE_LINE_BYTES);
    }
  } catch (err) {
    // After [DONE] or a failure event the record is final; an error while draining the rest changes nothing.
    if (!state.ended) {
      if (abortKind !== null) fail(rec, abortKind, abortMessage(abortKind, req));
      else if (rec.httpStatus === 0 && isConnectError(err)) fail(rec, "connect", errorText(err));
      else fail(rec, "network", errorText(err));
    }
  } finally {
    clearTimeout(requestTimer);
    clearTimeout(stallTimer);
    req.signal?.removeEventListener("abort", onCancel);
    // A request that ended before its body was all sent gives back what is left.
    if (req.body instanceof ReleasingBody) req.body.release();
  }
  finishRecord(rec, state, req.deferText === true);
  return rec;
}

/** The most bytes read of a failed request's error page: its first 200 characters are kept, after redaction. */
const ERROR_PAGE_BYTES = 64 * 1024;

function requestHeaders(req: StreamRequest): Record<string, string> {
  const headers: Record<string, string> = { "content-type": "application/json", ...req.headers };
  if (req.requestId !== undefined) headers["x-request-id"] = req.requestId;
  return headers;
}

/** Reads the body to its end, recording every event; rejects on a socket error or our abort. */
async function readEvents(
  body: ReadableStream<Uint8Array>,
  rec: RequestRecord,
  state: StreamState,
  headers: Record<string, string> | undefined,
  maxLineBytes: number,
): Promise<void> {
  // One fields object per request: a backend may keep a running token count in it.
  const fields = createEventFields();
  // Events of one chunk arrived together: they share the chunk's arrival time, taken once per read.
  let chunkMs = 0;
  const splitter = createSseSplitter((payload) => {
    if (state.ended) return;
    rec.lastEventMs = chunkMs;
    const kind = state.backend.scanEvent(payload, fields);
    const counts = kind === "other" || kind === "final";
    if (kind === "tokens") onTokenEvent(payload, rec, state, fields, chunkMs);
    // A usage chunk that reports tokens no earlier chunk carried (a chat stream whose only token was held back as
    // half a UTF-8 character) is the first token as far as the client can see.
    else if (counts && rec.tokenEvents === 0 && fields.completionTokens > 0) onTokenEvent(payload, rec, state, fields, chunkMs);
    else if (counts) onUsageEvent(rec, fields);
    // llama.cpp's native stream ends with its final event, no [DONE] after it.
    if (kind === "done" || kind === "final") {
      state.ended = true;
      if (rec.tokenEvents === 0) fail(rec, "no_tokens", "stream ended without any token");
    } else if (kind !== "tokens" && kind !== "other") {
      state.ended = true;
      if (fields.finishType !== null) rec.finishReason = fields.finishType;
      // The server's own words, which may echo the request's credentials back.
      const message = redactCredentials(fields.message, headers);
      if (kind === "error") fail(rec, "server_error", message);
      else if (kind === "abort") fail(rec, "abort", message);
      else fail(rec, "parse", message);
    }
  }, maxLineBytes);
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    chunkMs = nowMs();
    state.lastByteMs = chunkMs;
    if (done) break;
    if (!splitter.push(value)) {
      // A line past the limit: the request fails (unless it had already ended) and the rest is not read.
      if (!state.ended) fail(rec, "protocol", `an SSE line longer than ${mib(maxLineBytes)}, the most warmbench reads of one line`);
      state.ended = true;
      await reader.cancel().catch(() => {});
      return;
    }
  }
  splitter.finish();
  if (!state.ended) fail(rec, "truncated", "stream ended before [DONE]");
}
