/**
 * The measured part of a stream: each event's counts, timestamps and text folded into the record as it arrives
 * (TTFT keyed on the server's token count, ITL spread over the tokens an event carried), then the record finished
 * outside the timed part.
 */
import type { RequestRecord } from "../schema/record.ts";
import { sglangBackend } from "../backends/sglang.ts";
import { TEXT_NOT_LOCATED, type Backend, type EventFields } from "../backends/types.ts";
import { nowMs } from "./clock.ts";
import { decodeEscapedText, EscapedText } from "./text-bytes.ts";
import type { StreamRequest } from "./stream-request.ts";

/** Per-request scratch state of the event loop. */
export interface StreamState {
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

export function newStreamState(req: StreamRequest): StreamState {
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

export function onTokenEvent(payload: Uint8Array, rec: RequestRecord, state: StreamState, fields: EventFields, atMs: number): void {
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
export function onUsageEvent(rec: RequestRecord, fields: EventFields): void {
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
  if (fields.slot >= 0) rec.slot = fields.slot;
}

function grow(itl: Float64Array, needed: number): Float64Array {
  const bigger = new Float64Array(Math.max(needed, itl.length * 2));
  bigger.set(itl);
  return bigger;
}

/** Outside the timed part: the text bytes and the ITL view. */
export function finishRecord(rec: RequestRecord, state: StreamState, deferText: boolean): void {
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
