/**
 * BASELINE, for bench/ only: src/client/stream.ts as it was before the text bytes (commit 19ca79f): every token
 * event's payload view kept until the stream ends, copied then, and each parsed again for its text after the run.
 * Kept verbatim (imports, the record's textPayloads field and the names aside) so that `bun run bench` measures
 * before and after side by side in one run. Not used by warmbench.
 *
 * The original header follows.
 */
/**
 * One streamed generation request -> one RequestRecord, for any Backend (SGLang native, OpenAI-compatible).
 * Metric definitions follow async_request_sglang_generate of bench_warm_cache.py, with the fixes of
 * protocol.md §7 (TTFT keyed on the server's token count, not on text; failures inside a 200 stream are
 * failures).
 */
import type { FailureKind, RequestRecord as CurrentRecord } from "../../src/schema/record.ts";
import { sglangBackend } from "../../src/backends/sglang.ts";
import { createEventFields, type Backend, type EventFields } from "../../src/backends/types.ts";
import { nowMs } from "../../src/client/clock.ts";
import { createSseSplitter } from "../../src/client/sse.ts";

/** The record as it was: raw event payloads kept for the text until resolveGeneratedText. */
export type RequestRecord = Omit<CurrentRecord, "textBytes"> & { textPayloads?: Uint8Array[] };

/** Everything one request needs; the body is serialized before any clock starts. */
export interface StreamRequest {
  url: string;
  /** The serialized body, whole or as parts sent in order without being joined (see requestBody). */
  body: Uint8Array | readonly Uint8Array[];
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
   * Leave generatedText to resolveGeneratedText(), called once every request of the pct has ended: parsing the
   * text when each stream ends would hold up the other streams' events (~0.25 ms per request in incremental mode).
   */
  deferText?: boolean;
}

const CONNECT_ERROR_CODES = new Set([
  "ECONNREFUSED",
  "ConnectionRefused",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "EAI_AGAIN",
  "FailedToOpenSocket",
  "UnableToConnect",
]);

/** Sends the request and measures it; never throws, every failure is a field of the record. */
export async function baselineStreamRequest(req: StreamRequest): Promise<RequestRecord> {
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
  const sent = requestBody(req.body);
  const init: RequestInit = {
    method: "POST",
    headers: sent.headers ? { ...requestHeaders(req), ...sent.headers } : requestHeaders(req),
    body: sent.body,
    signal: controller.signal,
  };
  rec.startMs = nowMs();
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
  }
  finishRecord(rec, state, req.deferText === true);
  return rec;
}

function requestHeaders(req: StreamRequest): Record<string, string> {
  const headers: Record<string, string> = { "content-type": "application/json", ...req.headers };
  if (req.requestId !== undefined) headers["x-request-id"] = req.requestId;
  return headers;
}

/** Bodies this large are streamed from their parts instead of joined into one fresh copy per request. */
const JOIN_LIMIT_BYTES = 64 * 1024;

/**
 * fetch's body and length header. A large body goes out as a stream over the parts, with an explicit
 * content-length so it is still a plain fixed-length request (no chunked encoding): Bun keeps a request's body
 * alive until the response ends, so joined copies of 70k-token prompts would cost ~0.5 MB per stream in flight.
 */
function requestBody(body: Uint8Array | readonly Uint8Array[]): { body: Uint8Array | ReadableStream<Uint8Array>; headers?: Record<string, string> } {
  if (body instanceof Uint8Array) return { body };
  let length = 0;
  for (const part of body) length += part.length;
  if (length <= JOIN_LIMIT_BYTES || body.length === 1) {
    if (body.length === 1) return { body: body[0] as Uint8Array };
    const joined = new Uint8Array(length);
    let at = 0;
    for (const part of body) {
      joined.set(part, at);
      at += part.length;
    }
    return { body: joined };
  }
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const part of body) controller.enqueue(part);
      controller.close();
    },
  });
  return { body: stream, headers: { "content-length": String(length) } };
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
  /** Payloads whose text becomes generatedText: the last one (cumulative) or all (incremental). */
  textPayloads: Uint8Array[];
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
    textPayloads: [],
  };
}

/** Reads the body to its end, recording every event; rejects on a socket error or our abort. */
async function readEvents(body: ReadableStream<Uint8Array>, rec: RequestRecord, state: StreamState): Promise<void> {
  // One fields object per request: a backend may keep a running token count in it.
  const fields = createEventFields();
  // Events of one chunk arrived together: they share the chunk's arrival time, taken once per read.
  let chunkMs = 0;
  const splitter = createSseSplitter((payload) => {
    if (state.ended) return;
    rec.latencyMs = chunkMs - rec.startMs;
    const kind = state.backend.scanEvent(payload, fields);
    if (kind === "tokens") onTokenEvent(payload, rec, state, fields, chunkMs);
    else if (kind === "other") onUsageEvent(rec, fields);
    else if (kind === "done") {
      state.ended = true;
      if (rec.tokenEvents === 0) fail(rec, "no_tokens", "stream ended without any token");
    } else {
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

function onTokenEvent(payload: Uint8Array, rec: RequestRecord, state: StreamState, fields: EventFields, atMs: number): void {
  recordCounts(rec, fields);
  if (state.cumulative) state.textPayloads[0] = payload;
  else state.textPayloads.push(payload);
  const newTokens = fields.completionTokens - state.lastCompletionTokens;
  // As the script: an event without new tokens moves no timestamp.
  if (newTokens <= 0) return;
  if (rec.tokenEvents > 0) {
    const gapMs = (atMs - state.lastTokenMs) / newTokens;
    if (state.itlCount + newTokens > state.itl.length) state.itl = grow(state.itl, state.itlCount + newTokens);
    state.itl.fill(gapMs, state.itlCount, state.itlCount + newTokens);
    state.itlCount += newTokens;
  } else {
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
  if (fields.finishType !== null) rec.finishReason = fields.finishType;
}

function grow(itl: Float64Array, needed: number): Float64Array {
  const bigger = new Float64Array(Math.max(needed, itl.length * 2));
  bigger.set(itl);
  return bigger;
}

/** Outside the timed part: text decoding and the ITL view. */
function finishRecord(rec: RequestRecord, state: StreamState, deferText: boolean): void {
  rec.itlMs = state.itl.subarray(0, state.itlCount);
  // The payloads are views into fetch's chunks; a coalesced chunk can be large, so keep copies of just them.
  rec.textPayloads = state.textPayloads.map((p) => p.slice());
  if (!deferText) baselineResolveGeneratedText(rec, state.backend);
}

/** Turns a record's retained event payloads into generatedText (a full parse of each); call it after the run. */
export function baselineResolveGeneratedText(rec: RequestRecord, backend: Backend = sglangBackend): void {
  const payloads = rec.textPayloads;
  if (payloads === undefined) return;
  let text = "";
  for (const payload of payloads) text += backend.extractText(payload);
  rec.generatedText = text;
  delete rec.textPayloads;
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

function isConnectError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && CONNECT_ERROR_CODES.has(code);
}

function errorText(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  const short = message.split(". ")[0] ?? message;
  return typeof code === "string" && !short.startsWith(code) ? `${code}: ${short}` : short;
}
