/**
 * One streamed generation request -> one RequestRecord, for any Backend (SGLang native, OpenAI-compatible).
 * Metric definitions follow async_request_sglang_generate of bench_warm_cache.py, with the fixes of
 * protocol.md §7 (TTFT keyed on the server's token count, not on text; failures inside a 200 stream are
 * failures).
 */
import type { FailureKind, RequestRecord } from "../schema/record.ts";
import { sglangBackend } from "../backends/sglang.ts";
import { createEventFields, TEXT_NOT_LOCATED, type Backend, type EventFields } from "../backends/types.ts";
import { nowMs } from "./clock.ts";
import { fetchBody, ReleasingBody, type RequestBody } from "./request-body.ts";
import { createSseSplitter } from "./sse.ts";
import { decodeEscapedText, EscapedText } from "./text-bytes.ts";

/** Everything one request needs; the body is serialized before any clock starts. */
export interface StreamRequest {
  url: string;
  /** The serialized body, whole or as parts sent in order without being joined (see request-body.ts). */
  body: RequestBody;
  /**
   * When the schedule meant this request to go out (nowMs clock): its arrival time in an open-loop run, the moment
   * its slot was free in a closed loop. The send itself is stamped just before fetch; absent, the two are equal.
   */
  intendedMs?: number;
  /** Wire format of the stream; SGLang native when absent. */
  backend?: Backend;
  /** Extra request headers (e.g. authorization); content-type is always application/json. */
  headers?: Record<string, string>;
  /** Sent as the x-request-id header when set. */
  requestId?: string;
  /** Index of the prompt within its set, copied to the record. */
  index: number;
  /** Prompt length in tokens, copied to the record. */
  promptLen: number;
  /** Sizes the ITL buffer (it grows if the server sends more). */
  maxNewTokens: number;
  /** Server text mode: whole text so far in each event, or deltas. Ignored by backends whose text is always a delta. */
  textMode: "cumulative" | "incremental";
  requestTimeoutMs: number;
  /** Fail the request when no byte arrives for this long. */
  stallTimeoutMs: number;
  /** Aborting it ends the request as "cancelled". */
  signal?: AbortSignal;
  /**
   * Leave generatedText to resolveGeneratedText(), called once every request of the pct has ended: decoding the
   * text when each stream ends would hold up the other streams' events.
   */
  deferText?: boolean;
  /**
   * Keep copies of the token events' payloads in the record (`payloads`; the last one alone for cumulative text),
   * for callers that read more than the text afterwards (multi-turn conversations read the server's output_ids).
   */
  keepPayloads?: boolean;
}

const CONNECT_ERROR_CODES = new Set([
  "ECONNREFUSED", "ConnectionRefused", "ENOTFOUND", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL",
  "EAI_AGAIN", "FailedToOpenSocket", "UnableToConnect",
]);

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
  if (state.backend.freshConnections) init.keepalive = false;
  rec.startMs = nowMs();
  rec.intendedMs = req.intendedMs ?? rec.startMs;
  try {
    const res = await fetch(req.url, init);
    state.lastByteMs = nowMs();
    rec.httpStatus = res.status;
    if (res.status !== 200 || res.body === null) {
      const text = await res.text();
      fail(rec, "http", `HTTP ${res.status}: ${text.slice(0, 200)}`);
    } else {
      await readEvents(res.body, rec, state);
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

function requestHeaders(req: StreamRequest): Record<string, string> {
  const headers: Record<string, string> = { "content-type": "application/json", ...req.headers };
  if (req.requestId !== undefined) headers["x-request-id"] = req.requestId;
  return headers;
}

/** Per-request scratch state of the event loop. */
interface StreamState {
  backend: Backend;
  /** Text is the whole text so far in each event: only the last payload is kept. */
  cumulative: boolean;
  itl: Float64Array;
  itlCount: number;
  /** Arrival of the last byte (or of the request start), read by the stall timer. */
  lastByteMs: number;
  lastTokenMs: number;
  lastCompletionTokens: number;
  /** [DONE] seen, or a failure event: later events are drained but not measured. */
  ended: boolean;
  /** Delta text: every token event's text, copied out as raw JSON string content. */
  text: EscapedText;
  /** Cumulative text: the last token event's payload, whose text alone is kept when the stream ends. */
  lastTextPayload: Uint8Array | null;
  /** keepPayloads: copies of the delta events' payloads (cumulative: lastTextPayload is copied at the end). */
  payloads: Uint8Array[] | null;
}

function newStreamState(req: StreamRequest): StreamState {
  const backend = req.backend ?? sglangBackend;
  return {
    backend,
    cumulative: !backend.deltaText && req.textMode === "cumulative",
    itl: new Float64Array(Math.max(1, req.maxNewTokens)),
    itlCount: 0,
    lastByteMs: nowMs(),
    lastTokenMs: 0,
    lastCompletionTokens: 0,
    ended: false,
    text: new EscapedText(req.maxNewTokens),
    lastTextPayload: null,
    payloads: req.keepPayloads === true ? [] : null,
  };
}

/** Reads the body to its end, recording every event; rejects on a socket error or our abort. */
async function readEvents(
  body: ReadableStream<Uint8Array>,
  rec: RequestRecord,
  state: StreamState,
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
      if (kind === "error") fail(rec, "server_error", fields.message);
      else if (kind === "abort") fail(rec, "abort", fields.message);
      else fail(rec, "parse", fields.message);
    }
  });
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    chunkMs = nowMs();
    state.lastByteMs = chunkMs;
    if (done) break;
    splitter.push(value);
  }
  splitter.finish();
  if (!state.ended) fail(rec, "truncated", "stream ended before [DONE]");
}

function onTokenEvent(
  payload: Uint8Array,
  rec: RequestRecord,
  state: StreamState,
  fields: EventFields,
  atMs: number,
): void {
  recordCounts(rec, fields);
  if (state.cumulative) state.lastTextPayload = payload;
  else {
    state.payloads?.push(payload.slice());
    if (fields.textStart === TEXT_NOT_LOCATED) state.backend.locateText(payload, fields);
    state.text.append(payload, fields.textStart, fields.textEnd);
  }
  const newTokens = fields.completionTokens - state.lastCompletionTokens;
  // As the script: an event without new tokens moves no timestamp.
  if (newTokens <= 0) return;
  if (rec.tokenEvents > 0) {
    const gapMs = (atMs - state.lastTokenMs) / newTokens;
    if (state.itlCount + newTokens > state.itl.length) state.itl = grow(state.itl, state.itlCount + newTokens);
    state.itl.fill(gapMs, state.itlCount, state.itlCount + newTokens);
    state.itlCount += newTokens;
  } else {
    rec.firstTokenMs = atMs;
    rec.ttftMs = atMs - rec.startMs;
  }
  rec.tokenEvents++;
  state.lastTokenMs = atMs;
  state.lastCompletionTokens = fields.completionTokens;
  rec.outputLen = fields.completionTokens;
}

/**
 * An event without tokens to time (OpenAI's usage-only chunk after the last token): its total corrects a count
 * made one token per chunk, for servers without per-chunk usage. It never moves TTFT or ITL.
 */
function onUsageEvent(rec: RequestRecord, fields: EventFields): void {
  recordCounts(rec, fields);
  if (rec.tokenEvents > 0 && fields.completionTokens > 0) rec.outputLen = fields.completionTokens;
}

function recordCounts(rec: RequestRecord, fields: EventFields): void {
  if (rec.cachedTokens < 0 && fields.cachedTokens >= 0) rec.cachedTokens = fields.cachedTokens;
  if (rec.cachedDeviceTokens < 0 && fields.cachedDeviceTokens >= 0) {
    rec.cachedDeviceTokens = fields.cachedDeviceTokens;
    rec.cachedHostTokens = Math.max(0, fields.cachedHostTokens);
    rec.cachedStorageTokens = Math.max(0, fields.cachedStorageTokens);
    // Constant over the stream: later events need not be scanned for them.
    fields.tiersKnown = true;
  }
  if (fields.finishType !== null) rec.finishReason = fields.finishType;
}

function grow(itl: Float64Array, needed: number): Float64Array {
  const bigger = new Float64Array(Math.max(needed, itl.length * 2));
  bigger.set(itl);
  return bigger;
}

/** Outside the timed part: the text bytes and the ITL view. */
function finishRecord(rec: RequestRecord, state: StreamState, deferText: boolean): void {
  // Derived once here rather than stored with every event: E2E runs to the last event measured.
  if (rec.lastEventMs > 0) rec.latencyMs = rec.lastEventMs - rec.startMs;
  rec.itlMs = state.itl.subarray(0, state.itlCount);
  if (state.payloads !== null) {
    rec.payloads = state.cumulative ? (state.lastTextPayload === null ? [] : [state.lastTextPayload.slice()]) : state.payloads;
  }
  rec.textBytes = state.cumulative ? lastText(state) : state.text.take();
  if (!deferText) resolveGeneratedText(rec);
}

/** A copy of the text of the last cumulative payload (a view into fetch's chunk, which it would pin). */
function lastText(state: StreamState): Uint8Array {
  const payload = state.lastTextPayload;
  state.lastTextPayload = null;
  if (payload === null) return new Uint8Array(0);
  const range = { textStart: -1, textEnd: -1 };
  state.backend.locateText(payload, range);
  return range.textStart < 0 ? new Uint8Array(0) : payload.slice(range.textStart, range.textEnd);
}

/**
 * Turns a record's retained text bytes into generatedText (one JSON.parse per request; text that does not
 * decode counts as none); call it after the run.
 */
export function resolveGeneratedText(rec: RequestRecord): void {
  const bytes = rec.textBytes;
  if (bytes === undefined) return;
  rec.generatedText = decodeEscapedText(bytes);
  delete rec.textBytes;
}

function emptyRecord(req: StreamRequest): RequestRecord {
  return {
    index: req.index,
    ok: true,
    failureKind: null,
    failureMessage: "",
    httpStatus: 0,
    promptLen: req.promptLen,
    intendedMs: 0,
    startMs: 0,
    firstTokenMs: 0,
    lastEventMs: 0,
    ttftMs: 0,
    latencyMs: 0,
    outputLen: 0,
    cachedTokens: -1,
    cachedDeviceTokens: -1,
    cachedHostTokens: -1,
    cachedStorageTokens: -1,
    itlMs: new Float64Array(0),
    tokenEvents: 0,
    finishReason: null,
    generatedText: "",
  };
}

/** Marks the record failed; the first failure wins, so a later symptom cannot hide the cause. */
function fail(rec: RequestRecord, kind: FailureKind, message: string): RequestRecord {
  if (rec.ok) {
    rec.ok = false;
    rec.failureKind = kind;
    rec.failureMessage = message;
  }
  return rec;
}

function abortMessage(kind: FailureKind, req: StreamRequest): string {
  if (kind === "timeout") return `request timeout after ${req.requestTimeoutMs} ms`;
  if (kind === "stall") return `no bytes for ${req.stallTimeoutMs} ms`;
  return "cancelled";
}

/** A failure to reach the server at all (no connection made): refused, unresolvable, unroutable. */
export function isConnectError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && CONNECT_ERROR_CODES.has(code);
}

/** A fetch error in one short line: its code first when the message does not already start with it. */
export function errorText(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  const short = message.split(". ")[0] ?? message;
  return typeof code === "string" && !short.startsWith(code) ? `${code}: ${short}` : short;
}
