/**
 * Hot-path scanner of one OpenAI-compatible stream chunk, `/v1/completions` or `/v1/chat/completions` (SGLang,
 * vLLM, llama.cpp; docs/protocol.md §3, §7, §8).
 *
 * Token counting: with `stream_options.continuous_usage_stats` every chunk carries the cumulative
 * `usage.completion_tokens`, which is used as is. Servers that ignore that option send no usage per chunk:
 * then every chunk with a non-empty `choices` counts one token (vLLM sends `text: ""` for a token that decodes
 * to nothing, so text is no signal), and the final usage chunk (`choices: []`) corrects the total. A chat chunk
 * counts one only when its delta has content: the role-only chunk that opens a chat stream (vLLM sends it before
 * prefill) and the empty delta that carries the finish reason hold no token.
 *
 * Reading, without decoding the chunk or JSON.parse where possible, in three tiers that reduce it to the same
 * ChunkFacts, classified by one function: the plain shape of vLLM's and SGLang's chunks by a few native key
 * searches (openai-plain.ts); any other well-formed chunk by a structural walk (openai-walk.ts); and JSON.parse
 * for what the walk flags as unusual (a non-null `error`, a count that is not a plain integer, an escaped finish
 * reason) or cannot follow (every malformed payload among others).
 *
 * SGLang's OpenAI server with `return_cached_tokens_details` adds the per-tier breakdown (`sglext` or
 * usage.prompt_tokens_details.cached_tokens_details); vLLM has none. A native search for the key decides whether a
 * chunk is parsed for it, once per request (EventFields.tiersKnown), so chunks without it cost one search.
 */
import { errorMessage, intList, isDonePayload, isObject, parseEventObject } from "./json.ts";
import { indexOfBytes, type ByteRange } from "./json-bytes.ts";
import { CHOICES_EMPTY, CHOICES_NONE, CHOICES_SOME, facts } from "./openai-facts.ts";
import { readPlainChunk } from "./openai-plain.ts";
import { walkOpenaiChunk, WALK_PLAIN, WALK_SYNTAX, WALK_UNUSUAL } from "./openai-walk.ts";
import type { EventFields, EventKind } from "./types.ts";

const decoder = new TextDecoder();
const DETAILS_KEY = new TextEncoder().encode('"cached_tokens_details":');

/**
 * Classifies one chunk and fills `out`; never throws. `out.completionTokens` is a running count kept across the
 * chunks of one request, so `out` must be a fresh object per request; the other fields are reset on every chunk.
 */
export function scanOpenaiEvent(payload: Uint8Array, out: EventFields): EventKind {
  resetOut(out);
  if (isDonePayload(payload)) return "done";
  const walked = readPlainChunk(payload) ? WALK_PLAIN : walkOpenaiChunk(payload);
  // Not followed by the walk: no text bounds either (a payload that JSON.parse accepts is not known to get here).
  if (walked === WALK_SYNTAX) return classifyByParsing(payload, out);
  out.textStart = facts.textStart;
  out.textEnd = facts.textEnd;
  if (!out.tiersKnown && indexOfBytes(payload, DETAILS_KEY, 0) !== -1) readTiersByParsing(payload, out);
  return walked === WALK_UNUSUAL ? classifyByParsing(payload, out) : classify(out);
}

/**
 * scanOpenaiEvent by JSON.parse alone, without the text bounds: the reading that the byte readers must agree
 * with (and the one every chunk had before them).
 */
export function scanOpenaiEventByParsing(payload: Uint8Array, out: EventFields): EventKind {
  resetOut(out);
  if (isDonePayload(payload)) return "done";
  return classifyByParsing(payload, out);
}

function resetOut(out: EventFields): void {
  out.cachedTokens = -1;
  out.cachedDeviceTokens = -1;
  out.cachedHostTokens = -1;
  out.cachedStorageTokens = -1;
  out.finishType = null;
  out.message = "";
  out.textStart = -1;
  out.textEnd = -1;
}

/** Bounds of choices[0].text as raw JSON string content (see EventFields), -1 when there is none; never throws. */
export function locateOpenaiText(payload: Uint8Array, out: ByteRange): void {
  const walked = walkOpenaiChunk(payload);
  out.textStart = walked === WALK_SYNTAX ? -1 : facts.textStart;
  out.textEnd = walked === WALK_SYNTAX ? -1 : facts.textEnd;
}

/** The `choices[0].text` (or chat `choices[0].delta.content`) of one chunk ("" if none or not JSON); a full parse. */
export function extractOpenaiText(payload: Uint8Array): string {
  try {
    const event: unknown = JSON.parse(decoder.decode(payload));
    if (!isObject(event) || !Array.isArray(event.choices)) return "";
    const choice: unknown = event.choices[0];
    if (isObject(choice) && typeof choice.text === "string") return choice.text;
    if (isObject(choice) && isObject(choice.delta) && typeof choice.delta.content === "string") return choice.delta.content;
  } catch {
    // not JSON: no text
  }
  return "";
}

/** `choices[0].token_ids` of one chunk (vLLM / SGLang with return_token_ids), or null; a full parse, after the stream. */
export function extractOpenaiOutputIds(payload: Uint8Array): number[] | null {
  try {
    const event: unknown = JSON.parse(decoder.decode(payload));
    if (!isObject(event) || !Array.isArray(event.choices)) return null;
    const choice: unknown = event.choices[0];
    return isObject(choice) ? intList(choice.token_ids) : null;
  } catch {
    return null;
  }
}

/** Parses a chunk that names cached_tokens_details, for the tiers alone. */
function readTiersByParsing(payload: Uint8Array, out: EventFields): void {
  try {
    const event: unknown = JSON.parse(decoder.decode(payload));
    if (isObject(event)) readTiers(event, isObject(event.usage) ? event.usage : null, out);
  } catch {
    // unreadable: the tiers stay unknown
  }
}

/** The one reading of the facts into a kind, shared by every reader so that they cannot disagree. */
function classify(out: EventFields): EventKind {
  if (facts.error !== null) {
    out.message = facts.error;
    return "error";
  }
  if (facts.usage) out.cachedTokens = facts.cachedTokens;
  if (out.cachedTokens < 0 && facts.timingsCached >= 0) out.cachedTokens = facts.timingsCached;
  if (facts.choices === CHOICES_NONE && !facts.usage) {
    out.message = "event has neither choices nor usage";
    return "invalid";
  }
  if (facts.choices !== CHOICES_SOME) {
    // The usage-only chunk after the last token: final counts, no token to time.
    if (facts.usageTokens >= 0) out.completionTokens = facts.usageTokens;
    return "other";
  }
  const counted = !facts.delta || facts.textEnd > facts.textStart;
  out.completionTokens = facts.usageTokens >= 0 ? facts.usageTokens : out.completionTokens + (counted ? 1 : 0);
  out.finishType = facts.finishType;
  if (out.finishType === "abort" || out.finishType === "error") {
    out.message = `finish_reason "${out.finishType}"`;
    return "abort";
  }
  return "tokens";
}

/** Fills `facts` (text bounds aside) from JSON.parse of the chunk and classifies it. */
function classifyByParsing(payload: Uint8Array, out: EventFields): EventKind {
  const event = parseEventObject(payload, out);
  if (event === null) return "invalid";
  facts.error = "error" in event && event.error !== null ? errorMessage(event.error) : null;
  const usage = isObject(event.usage) ? event.usage : null;
  facts.usage = usage !== null;
  facts.usageTokens = usage !== null && typeof usage.completion_tokens === "number" ? usage.completion_tokens : -1;
  facts.cachedTokens = usage !== null ? cachedTokensOf(usage) : -1;
  readTiers(event, usage, out);
  const timings = isObject(event.timings) ? event.timings : null;
  facts.timingsCached = timings !== null && typeof timings.cache_n === "number" ? timings.cache_n : -1;
  const choices = Array.isArray(event.choices) ? (event.choices as unknown[]) : null;
  facts.choices = choices === null ? CHOICES_NONE : choices.length === 0 ? CHOICES_EMPTY : CHOICES_SOME;
  const choice = choices?.[0];
  facts.finishType = isObject(choice) && typeof choice.finish_reason === "string" ? choice.finish_reason : null;
  facts.delta = isObject(choice) && isObject(choice.delta);
  // Only "has text" matters here (the parsed reading has no byte bounds): a non-empty content reads as 0..1.
  const content = facts.delta ? (choice as { delta: Record<string, unknown> }).delta.content : null;
  facts.textStart = typeof content === "string" && content !== "" ? 0 : -1;
  facts.textEnd = facts.textStart === 0 ? 1 : -1;
  return classify(out);
}

/** usage.prompt_tokens_details.cached_tokens; -1 when absent (vLLM without --enable-prompt-tokens-details). */
function cachedTokensOf(usage: Record<string, unknown>): number {
  const details = usage.prompt_tokens_details;
  if (isObject(details) && typeof details.cached_tokens === "number") return details.cached_tokens;
  return -1;
}

/** The per-tier breakdown from `sglext` or usage.prompt_tokens_details; absent: the tiers stay -1. */
function readTiers(event: Record<string, unknown>, usage: Record<string, unknown> | null, out: EventFields): void {
  const sglext = isObject(event.sglext) ? event.sglext : null;
  const promptDetails = usage !== null && isObject(usage.prompt_tokens_details) ? usage.prompt_tokens_details : null;
  const details = sglext?.cached_tokens_details ?? promptDetails?.cached_tokens_details;
  // null: reported, nothing cached; absent or unreadable: unknown (as SGLang's native reader has it).
  if (details === undefined || (details !== null && !isObject(details))) return;
  const d = isObject(details) ? details : {};
  const tier = (v: unknown): number => (typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : 0);
  out.cachedDeviceTokens = tier(d.device);
  out.cachedHostTokens = tier(d.host);
  out.cachedStorageTokens = tier(d.storage);
}
