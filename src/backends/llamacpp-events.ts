/**
 * Hot-path scanner of llama.cpp's native `POST /completion` stream (docs/llamacpp.md, "Native POST
 * /completion"; llama.cpp tools/server: server-context.cpp send_partial_response, server-task.cpp
 * to_json_non_oaicompat). Two kinds of event, and no `[DONE]`:
 *
 * - partial, one per streamed token: `{"index":0,"content":"<delta>","tokens":[id],"stop":false,"id_slot":-1,
 *   "tokens_predicted":N,"tokens_evaluated":M}`; tokens_predicted counts every token generated so far;
 * - final, `"stop":true`, which ends the stream: content "" and tokens [] (the streamed events had them), the
 *   totals, stop_type, and timings.cache_n, the prompt tokens served from the cache. Its `tokens_cached` is what the
 *   slot now holds (prompt + output - 1), not a cache hit.
 *
 * A token whose text ends inside a UTF-8 character is never streamed on its own: its text comes with the next
 * streamed token, its id with no event at all (process_token sends the partial response for complete text only,
 * and each carries its own token's id). A gap in tokens_predicted between events shows it, and the ids then come
 * short of the count: multi-turn checks that count (output-ids.ts).
 *
 * Partial events are small and read by a byte search from their end (`"stop":` and `"tokens_predicted":` cannot
 * occur inside a JSON string, whose quotes are escaped); the final event, once per request, is parsed.
 */
import { errorMessage, intList, isDonePayload, isObject, parseEventObject } from "./json.ts";
import { lastIndexOfBytes, locateTopLevelString, readUint, skipBlanks, startsWith, type ByteRange } from "./json-bytes.ts";
import { TEXT_NOT_LOCATED, type EventFields, type EventKind } from "./types.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const STOP_KEY = encoder.encode('"stop":');
const PREDICTED_KEY = encoder.encode('"tokens_predicted":');
const FALSE = encoder.encode("false");
const CONTENT_NAME = encoder.encode("content");

/** stop_type as the finish reasons the other wires report ("limit": n_predict or the context ran out). */
const FINISH_OF_STOP_TYPE: Readonly<Record<string, string>> = { limit: "length", eos: "stop", word: "stop" };

/** Classifies one event and fills `out`; never throws. */
export function scanLlamacppEvent(payload: Uint8Array, out: EventFields): EventKind {
  out.cachedTokens = -1;
  out.finishType = null;
  out.message = "";
  // The text is wanted for delta events only, and located then (locateLlamacppText).
  out.textStart = TEXT_NOT_LOCATED;
  out.textEnd = TEXT_NOT_LOCATED;
  if (isDonePayload(payload)) return "done";
  const stopAt = lastIndexOfBytes(payload, STOP_KEY, payload.length);
  if (stopAt === -1 || !startsWith(payload, FALSE, skipBlanks(payload, stopAt + STOP_KEY.length))) return scanByParsing(payload, out);
  const predictedAt = lastIndexOfBytes(payload, PREDICTED_KEY, payload.length);
  const predicted = predictedAt === -1 ? -1 : readUint(payload, predictedAt + PREDICTED_KEY.length);
  if (predicted < 0) return scanByParsing(payload, out);
  out.completionTokens = predicted;
  return "tokens";
}

/** scanLlamacppEvent by JSON.parse alone: the reading the byte search must agree with. */
export function scanByParsing(payload: Uint8Array, out: EventFields): EventKind {
  const event = parseEventObject(payload, out);
  if (event === null) return "invalid";
  if ("error" in event) {
    out.message = errorMessage(event.error);
    return "error";
  }
  if (typeof event.stop !== "boolean" || typeof event.tokens_predicted !== "number") {
    out.message = "event has no stop or tokens_predicted: not llama.cpp's /completion stream";
    return "invalid";
  }
  out.completionTokens = event.tokens_predicted;
  if (!event.stop) return "tokens";
  const timings = isObject(event.timings) ? event.timings : null;
  if (timings !== null && typeof timings.cache_n === "number") out.cachedTokens = timings.cache_n;
  if (typeof event.stop_type === "string") out.finishType = FINISH_OF_STOP_TYPE[event.stop_type] ?? event.stop_type;
  // -1 in partial events, the slot that ran the request in the final one: the slot model needs no guessing then.
  if (typeof event.id_slot === "number" && Number.isInteger(event.id_slot) && event.id_slot >= 0) out.slot = event.id_slot;
  return "final";
}

/** Bounds of the event's `content` as raw JSON string content (see EventFields), -1 when it has none. */
export function locateLlamacppText(payload: Uint8Array, out: ByteRange): void {
  locateTopLevelString(payload, CONTENT_NAME, out);
}

/** The event's `content` ("" if none or not JSON); a full parse. */
export function extractLlamacppText(payload: Uint8Array): string {
  try {
    const event: unknown = JSON.parse(decoder.decode(payload));
    if (isObject(event) && typeof event.content === "string") return event.content;
  } catch {
    // not JSON: no text
  }
  return "";
}

/** The event's `tokens` (its generated ids, with return_tokens), or null; a full parse, after the stream. */
export function extractLlamacppOutputIds(payload: Uint8Array): number[] | null {
  try {
    const event: unknown = JSON.parse(decoder.decode(payload));
    return isObject(event) ? intList(event.tokens) : null;
  } catch {
    return null;
  }
}
