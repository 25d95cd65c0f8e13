/**
 * Scanner of one OpenAI-compatible `/v1/completions` stream chunk (SGLang, vLLM, llama.cpp; protocol.md §3, §7).
 *
 * Chunks are small deltas, so one JSON.parse per chunk is cheap (unlike SGLang's cumulative native events).
 * Token counting: with `stream_options.continuous_usage_stats` every chunk carries the cumulative
 * `usage.completion_tokens`, which is used as is. Servers that ignore that option send no usage per chunk:
 * then every chunk with a non-empty `choices` counts one token (vLLM sends `text: ""` for a token that decodes
 * to nothing, so text is no signal), and the final usage chunk (`choices: []`) corrects the total.
 */
import { errorMessage, intList, isDonePayload, isObject } from "./json.ts";
import type { EventFields, EventKind } from "./types.ts";

const decoder = new TextDecoder();

/**
 * Classifies one chunk and fills `out`. `out.completionTokens` is a running count kept across the chunks of one
 * request, so `out` must be a fresh object per request; the other fields are reset on every chunk.
 */
export function scanOpenaiEvent(payload: Uint8Array, out: EventFields): EventKind {
  out.cachedTokens = -1;
  out.cachedDeviceTokens = -1;
  out.cachedHostTokens = -1;
  out.cachedStorageTokens = -1;
  out.finishType = null;
  out.message = "";
  if (isDonePayload(payload)) return "done";
  const event = parseObject(payload, out);
  if (event === null) return "invalid";
  if ("error" in event && event.error !== null) {
    out.message = errorMessage(event.error);
    return "error";
  }
  const usage = isObject(event.usage) ? event.usage : null;
  const usageTokens = usage !== null && typeof usage.completion_tokens === "number" ? usage.completion_tokens : -1;
  if (usage !== null) out.cachedTokens = cachedTokensOf(usage);
  readTiers(event, usage, out);
  const choices = Array.isArray(event.choices) ? (event.choices as unknown[]) : null;
  if (choices === null && usage === null) {
    out.message = "event has neither choices nor usage";
    return "invalid";
  }
  if (choices === null || choices.length === 0) {
    // The usage-only chunk after the last token: final counts, no token to time.
    if (usageTokens >= 0) out.completionTokens = usageTokens;
    return "other";
  }
  out.completionTokens = usageTokens >= 0 ? usageTokens : out.completionTokens + 1;
  const choice = choices[0];
  if (isObject(choice) && typeof choice.finish_reason === "string") out.finishType = choice.finish_reason;
  if (out.finishType === "abort" || out.finishType === "error") {
    out.message = `finish_reason "${out.finishType}"`;
    return "abort";
  }
  return "tokens";
}

/** The `choices[0].text` delta of one chunk ("" if none or not JSON); a full parse, meant for after the stream. */
export function extractOpenaiText(payload: Uint8Array): string {
  try {
    const event: unknown = JSON.parse(decoder.decode(payload));
    if (!isObject(event) || !Array.isArray(event.choices)) return "";
    const choice: unknown = event.choices[0];
    if (isObject(choice) && typeof choice.text === "string") return choice.text;
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

function parseObject(payload: Uint8Array, out: EventFields): Record<string, unknown> | null {
  let event: unknown;
  try {
    event = JSON.parse(decoder.decode(payload));
  } catch {
    out.message = `invalid JSON event: ${decoder.decode(payload.subarray(0, 100))}`;
    return null;
  }
  if (!isObject(event)) {
    out.message = "event is not a JSON object";
    return null;
  }
  return event;
}

/**
 * SGLang's OpenAI server with `return_cached_tokens_details` puts the per-tier breakdown in `sglext` (or next to
 * cached_tokens in usage.prompt_tokens_details); vLLM has none. Absent: the tiers stay -1.
 */
function readTiers(event: Record<string, unknown>, usage: Record<string, unknown> | null, out: EventFields): void {
  const sglext = isObject(event.sglext) ? event.sglext : null;
  const promptDetails = usage !== null && isObject(usage.prompt_tokens_details) ? usage.prompt_tokens_details : null;
  const details = sglext?.cached_tokens_details ?? promptDetails?.cached_tokens_details;
  if (details === undefined) return;
  const d = isObject(details) ? details : {};
  const tier = (v: unknown): number => (typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : 0);
  out.cachedDeviceTokens = tier(d.device);
  out.cachedHostTokens = tier(d.host);
  out.cachedStorageTokens = tier(d.storage);
}

/** usage.prompt_tokens_details.cached_tokens; -1 when absent (vLLM without --enable-prompt-tokens-details). */
function cachedTokensOf(usage: Record<string, unknown>): number {
  const details = usage.prompt_tokens_details;
  if (isObject(details) && typeof details.cached_tokens === "number") return details.cached_tokens;
  return -1;
}
