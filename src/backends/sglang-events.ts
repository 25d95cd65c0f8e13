/**
 * Hot-path scanner of one SGLang native `/generate` stream payload (docs/protocol.md §1.3, §1.5).
 *
 * Cumulative events carry the whole text so far, so JSON.parse of every event is O(n^2) over a request.
 * The scanner instead reads the two numbers it needs by a byte search from the END of the payload:
 * `meta_info` is the last key, and the byte sequence `"key":` cannot occur inside a JSON string (a quote
 * in a string is always escaped as `\"`), so the match found is the real key. Only unusual events (a
 * non-null finish_reason, an error, anything unexpected) are fully parsed.
 *
 * The per-tier breakdown (`cached_tokens_details`, SGLang >= 0.5.9 with HiCache: {"device","host"[,"storage",
 * "storage_backend"]}, or null when nothing was cached) follows `cached_tokens` in meta_info
 * (tokenizer_manager.py `_handle_batch_output`), so it is searched forward from there, over the few bytes of
 * meta_info's tail: never back through the cumulative text, so a server without it costs nothing.
 */

import { errorMessage, intList, isDonePayload, isObject, parseEventObject } from "./json.ts";
import { indexOfBytes, lastIndexOfBytes, locateTopLevelString, QUOTE, readUint, skipBlanks, startsWith, stringEnd, type ByteRange } from "./json-bytes.ts";
import { createEventFields, TEXT_NOT_LOCATED, type EventFields, type EventKind } from "./types.ts";

/** What one payload means for the request (SGLang native never yields "other"). */
export type SglangEventKind = Exclude<EventKind, "other" | "final">;

/** Fields filled by scanSglangEvent; every event resets them (no state is carried between events). */
export type SglangEventFields = EventFields;

/** A fresh, empty fields object. */
export const createSglangEventFields: () => SglangEventFields = createEventFields;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const COMPLETION_KEY = encoder.encode('"completion_tokens":');
const CACHED_KEY = encoder.encode('"cached_tokens":');
const FINISH_KEY = encoder.encode('"finish_reason":');
const DETAILS_KEY = encoder.encode('"cached_tokens_details":');
const DEVICE_KEY = encoder.encode('"device":');
const HOST_KEY = encoder.encode('"host":');
const STORAGE_KEY = encoder.encode('"storage":');
const NULL = encoder.encode("null");
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;

/** Classifies one data payload and fills `out`; never throws. */
export function scanSglangEvent(payload: Uint8Array, out: SglangEventFields): SglangEventKind {
  out.completionTokens = 0;
  out.cachedTokens = -1;
  out.cachedDeviceTokens = -1;
  out.cachedHostTokens = -1;
  out.cachedStorageTokens = -1;
  out.finishType = null;
  out.message = "";
  // Finding the text's end costs a pass over it, which cumulative events make O(n^2) per request: only
  // locateSglangText does it, when the text is wanted.
  out.textStart = TEXT_NOT_LOCATED;
  out.textEnd = TEXT_NOT_LOCATED;
  if (isDonePayload(payload)) return "done";

  const completionAt = lastIndexOfBytes(payload, COMPLETION_KEY, payload.length);
  if (completionAt === -1) return scanByParsing(payload, out);
  const completionTokens = readUint(payload, completionAt + COMPLETION_KEY.length);
  if (completionTokens < 0) return scanByParsing(payload, out);

  // Search the finish_reason before the already found key first: it precedes completion_tokens in every
  // SGLang version; fall back to the whole payload so that a different key order still works.
  let finishAt = lastIndexOfBytes(payload, FINISH_KEY, completionAt);
  if (finishAt === -1) finishAt = lastIndexOfBytes(payload, FINISH_KEY, payload.length);
  if (finishAt === -1) return scanByParsing(payload, out);
  const valueAt = skipBlanks(payload, finishAt + FINISH_KEY.length);
  if (!startsWith(payload, NULL, valueAt)) return scanByParsing(payload, out);

  out.completionTokens = completionTokens;
  const cachedAt = lastIndexOfBytes(payload, CACHED_KEY, payload.length);
  if (cachedAt !== -1) {
    out.cachedTokens = readUint(payload, cachedAt + CACHED_KEY.length);
    if (!out.tiersKnown) scanTiers(payload, cachedAt + CACHED_KEY.length, out);
  }
  return "tokens";
}

/** Reads `"cached_tokens_details"` after `from` (the tail of meta_info); leaves the tiers at -1 when it is absent. */
function scanTiers(payload: Uint8Array, from: number, out: SglangEventFields): void {
  const at = indexOfBytes(payload, DETAILS_KEY, from);
  if (at === -1) return;
  const valueAt = skipBlanks(payload, at + DETAILS_KEY.length);
  if (startsWith(payload, NULL, valueAt)) {
    out.cachedDeviceTokens = 0;
    out.cachedHostTokens = 0;
    out.cachedStorageTokens = 0;
    return;
  }
  if (payload[valueAt] !== OPEN_BRACE) return;
  // A flat object of numbers and one class name: its first closing brace ends it.
  const end = payload.indexOf(CLOSE_BRACE, valueAt);
  if (end === -1) return;
  out.cachedDeviceTokens = tierValue(payload, DEVICE_KEY, valueAt, end);
  out.cachedHostTokens = tierValue(payload, HOST_KEY, valueAt, end);
  out.cachedStorageTokens = tierValue(payload, STORAGE_KEY, valueAt, end);
}

/** A tier's tokens inside the details object [start, end); 0 when the key is absent (SGLang omits storage without L3). */
function tierValue(payload: Uint8Array, key: Uint8Array, start: number, end: number): number {
  const at = indexOfBytes(payload, key, start);
  if (at === -1 || at >= end) return 0;
  return readUint(payload, at + key.length);
}

/** The `text` of one event ("" if absent or not JSON); a full parse, meant for once per request. */
export function extractText(payload: Uint8Array): string {
  try {
    const event: unknown = JSON.parse(decoder.decode(payload));
    if (isObject(event) && typeof event.text === "string") return event.text;
  } catch {
    // not JSON: no text
  }
  return "";
}

/** The `output_ids` of one event (null if absent, not JSON, or not a list of ints); a full parse, once per request. */
export function extractOutputIds(payload: Uint8Array): number[] | null {
  try {
    const event: unknown = JSON.parse(decoder.decode(payload));
    if (isObject(event)) return intList(event.output_ids);
  } catch {
    // not JSON: no ids
  }
  return null;
}

const TEXT_KEY = encoder.encode('"text"');
const TEXT_NAME = encoder.encode("text");
const LBRACE = 123;
const COLON = 58;

/**
 * Bounds of the `text` of one event as raw JSON string content (see EventFields), -1 when there is none; never
 * throws. SGLang writes `text` first (`{"text":"...`): that is read at once; any other layout is walked.
 */
export function locateSglangText(payload: Uint8Array, out: ByteRange): void {
  const openAt = skipBlanks(payload, 0);
  const keyAt = skipBlanks(payload, openAt + 1);
  if (payload[openAt] === LBRACE && startsWith(payload, TEXT_KEY, keyAt)) {
    const colonAt = skipBlanks(payload, keyAt + TEXT_KEY.length);
    const valueAt = skipBlanks(payload, colonAt + 1);
    const end = payload[colonAt] === COLON && payload[valueAt] === QUOTE ? stringEnd(payload, valueAt) : -1;
    if (end !== -1) {
      out.textStart = valueAt + 1;
      out.textEnd = end;
      return;
    }
  }
  locateTopLevelString(payload, TEXT_NAME, out);
}

function scanByParsing(payload: Uint8Array, out: SglangEventFields): SglangEventKind {
  const event = parseEventObject(payload, out);
  if (event === null) return "invalid";
  if ("error" in event) {
    out.message = errorMessage(event.error);
    return "error";
  }
  const meta = event.meta_info;
  if (!isObject(meta)) {
    out.message = "event has no meta_info";
    return "invalid";
  }
  if (typeof meta.cached_tokens === "number") out.cachedTokens = meta.cached_tokens;
  readParsedTiers(meta.cached_tokens_details, out);
  if (typeof meta.completion_tokens === "number") out.completionTokens = meta.completion_tokens;
  const finish = meta.finish_reason;
  if (isObject(finish)) {
    out.finishType = typeof finish.type === "string" ? finish.type : null;
    if (out.finishType === "abort") {
      out.message = typeof finish.message === "string" ? finish.message : "aborted";
      return "abort";
    }
  } else if (typeof finish === "string") {
    out.finishType = finish;
  }
  if (typeof meta.completion_tokens !== "number") {
    out.message = "event has no meta_info.completion_tokens";
    return "invalid";
  }
  return "tokens";
}

/**
 * The tiers of a parsed `cached_tokens_details` value (null: all 0; absent, or neither null nor an object: left at
 * -1, as the byte reader leaves them).
 */
function readParsedTiers(details: unknown, out: SglangEventFields): void {
  if (details !== null && !isObject(details)) return;
  const tier = (v: unknown): number => (typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : 0);
  const d = isObject(details) ? details : {};
  out.cachedDeviceTokens = tier(d.device);
  out.cachedHostTokens = tier(d.host);
  out.cachedStorageTokens = tier(d.storage);
}
