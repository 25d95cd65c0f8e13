/**
 * Hot-path scanner of one SGLang native `/generate` stream payload (protocol.md §1.3, §1.5).
 *
 * Cumulative events carry the whole text so far, so JSON.parse of every event is O(n^2) over a request.
 * The scanner instead reads the two numbers it needs by a byte search from the END of the payload:
 * `meta_info` is the last key, and the byte sequence `"key":` cannot occur inside a JSON string (a quote
 * in a string is always escaped as `\"`), so the match found is the real key. Only unusual events (a
 * non-null finish_reason, an error, anything unexpected) are fully parsed.
 */

import { errorMessage, isDonePayload, isObject } from "./json.ts";
import { lastIndexOfBytes, locateTopLevelString, QUOTE, readUint, skipBlanks, startsWith, stringEnd, type ByteRange } from "./json-bytes.ts";
import { createEventFields, TEXT_NOT_LOCATED, type EventFields, type EventKind } from "./types.ts";

/** What one payload means for the request (SGLang native never yields "other"). */
export type SglangEventKind = Exclude<EventKind, "other">;

/** Fields filled by scanSglangEvent; every event resets them (no state is carried between events). */
export type SglangEventFields = EventFields;

/** A fresh, empty fields object. */
export const createSglangEventFields: () => SglangEventFields = createEventFields;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const COMPLETION_KEY = encoder.encode('"completion_tokens":');
const CACHED_KEY = encoder.encode('"cached_tokens":');
const FINISH_KEY = encoder.encode('"finish_reason":');
const NULL = encoder.encode("null");

/** Classifies one data payload and fills `out`; never throws. */
export function scanSglangEvent(payload: Uint8Array, out: SglangEventFields): SglangEventKind {
  out.completionTokens = 0;
  out.cachedTokens = -1;
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
  if (cachedAt !== -1) out.cachedTokens = readUint(payload, cachedAt + CACHED_KEY.length);
  return "tokens";
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
  let event: unknown;
  try {
    event = JSON.parse(decoder.decode(payload));
  } catch {
    out.message = `invalid JSON event: ${decoder.decode(payload.subarray(0, 100))}`;
    return "invalid";
  }
  if (!isObject(event)) {
    out.message = "event is not a JSON object";
    return "invalid";
  }
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

