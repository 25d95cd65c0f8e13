/**
 * The fast reader of the chunk vLLM and SGLang send for every token (docs/protocol.md §3.1, §3.2):
 *
 *   {"id":…,"object":"text_completion","created":…,"model":…,"choices":[{"index":0,"text":"…","logprobs":null,
 *    "finish_reason":null,…}],"usage":{"prompt_tokens":…,"total_tokens":…,"completion_tokens":…}}
 *
 * (usage null or absent without continuous usage stats, `"choices":[]` in the usage-only chunk; llama.cpp puts
 * choices first), read by a few native searches for its keys, each one call whatever the chunk's length, where a
 * walk would touch every byte.
 *
 * Why a match is a real key: the pattern `"name":` ends in a quote followed by a colon, which only a key has
 * (inside a JSON string a quote is always escaped, `\"`, and a string value is never followed by a colon), so no
 * text the model generates can hold it, wherever the text sits. Generated content becomes keys in one place only,
 * a non-null `logprobs` (its `top_logprobs` maps are keyed by token text), so the reader requires, and otherwise
 * returns false for the structural walk (openai-walk.ts) to read the chunk:
 * - compact JSON from `{` to `}`, and no `"error":` key anywhere;
 * - `"choices":[` as a top-level member: nothing before it opens a container (no `{` or `[`);
 * - `"logprobs":` null or absent in choices[0];
 * - in choices[0], `"text":"` and `"finish_reason":` (null or a string without escapes): the first such keys after
 *   `"choices":[{` (every server streams one choice per chunk);
 * - `"completion_tokens":` and `"cached_tokens":` (the first after the choices' first text, or after `[]`), plain
 *   integers when there; without `"cached_tokens":`, llama.cpp's `"cache_n":` (a key of its `timings` only).
 * It reads nothing between those keys, so it does not check that those bytes are well formed (the trade
 * sglang-events.ts makes too): a malformed payload that still has this shape and ends in `}` reads as its keys say.
 */
import { indexOfBytes, readUint, startsWith, stringEnd } from "./json-bytes.ts";
import { CHOICES_EMPTY, CHOICES_SOME, facts, resetFacts } from "./openai-facts.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const CHOICES_OPEN = encoder.encode('"choices":[');
const ERROR_KEY = encoder.encode('"error":');
const LOGPROBS_KEY = encoder.encode('"logprobs":');
const TEXT_KEY = encoder.encode('"text":"');
const FINISH_KEY = encoder.encode('"finish_reason":');
const COMPLETION_KEY = encoder.encode('"completion_tokens":');
const CACHED_KEY = encoder.encode('"cached_tokens":');
const CACHE_N_KEY = encoder.encode('"cache_n":');
const NULL = encoder.encode("null");
const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const LBRACE = 123;
const RBRACE = 125;
const LBRACKET = 91;
const RBRACKET = 93;

/** Fills `facts` and returns true when the chunk has the plain shape; false: not read (facts undefined). */
export function readPlainChunk(payload: Uint8Array): boolean {
  const length = payload.length;
  if (payload[0] !== LBRACE || payload[length - 1] !== RBRACE) return false;
  if (indexOfBytes(payload, ERROR_KEY, 0) !== -1) return false;
  const choicesAt = indexOfBytes(payload, CHOICES_OPEN, 1);
  if (choicesAt === -1) return false;
  const before = payload[choicesAt - 1];
  if (before !== LBRACE && before !== COMMA) return false;
  const arrayAt = choicesAt + CHOICES_OPEN.length - 1;
  if (payload.indexOf(LBRACKET) !== arrayAt) return false;
  const firstBrace = payload.indexOf(LBRACE, 1);
  if (firstBrace !== -1 && firstBrace < arrayAt) return false;

  resetFacts();
  facts.choices = CHOICES_EMPTY;
  if (payload[arrayAt + 1] !== RBRACKET) {
    if (payload[arrayAt + 1] !== LBRACE || !readFirstChoice(payload, arrayAt + 1)) return false;
    facts.choices = CHOICES_SOME;
  }
  // usage follows choices in every server's chunk; a forward search from the text on covers only the tail.
  return readCounts(payload, facts.choices === CHOICES_SOME ? facts.textEnd : arrayAt);
}

/** text bounds and finish_reason of the choice whose `{` is at `at`. */
function readFirstChoice(payload: Uint8Array, at: number): boolean {
  const logprobsAt = indexOfBytes(payload, LOGPROBS_KEY, at);
  if (logprobsAt !== -1 && !startsWith(payload, NULL, logprobsAt + LOGPROBS_KEY.length)) return false;

  const textAt = indexOfBytes(payload, TEXT_KEY, at);
  if (textAt === -1) return false;
  const openQuote = textAt + TEXT_KEY.length - 1;
  const closeQuote = stringEnd(payload, openQuote);
  if (closeQuote === -1) return false;

  const finishAt = indexOfBytes(payload, FINISH_KEY, at);
  if (finishAt === -1) return false;
  const valueAt = finishAt + FINISH_KEY.length;
  if (payload[valueAt] === QUOTE) {
    const end = payload.indexOf(QUOTE, valueAt + 1);
    if (end === -1) return false;
    const backslash = payload.indexOf(BACKSLASH, valueAt + 1);
    if (backslash !== -1 && backslash < end) return false;
    facts.finishType = decoder.decode(payload.subarray(valueAt + 1, end));
  } else if (!startsWith(payload, NULL, valueAt)) {
    return false;
  }
  facts.textStart = openQuote + 1;
  facts.textEnd = closeQuote;
  return true;
}

/** usage.completion_tokens and cached_tokens, searched from `from` on. */
function readCounts(payload: Uint8Array, from: number): boolean {
  const completionAt = indexOfBytes(payload, COMPLETION_KEY, from);
  if (completionAt !== -1) {
    facts.usageTokens = readUint(payload, completionAt + COMPLETION_KEY.length);
    if (facts.usageTokens === -1) return false;
    facts.usage = true;
  }
  const cachedAt = indexOfBytes(payload, CACHED_KEY, from);
  if (cachedAt !== -1) {
    facts.cachedTokens = readUint(payload, cachedAt + CACHED_KEY.length);
    if (facts.cachedTokens === -1) return false;
    facts.usage = true;
    return true;
  }
  const cacheNAt = indexOfBytes(payload, CACHE_N_KEY, from);
  if (cacheNAt !== -1) {
    facts.timingsCached = readUint(payload, cacheNAt + CACHE_N_KEY.length);
    if (facts.timingsCached === -1) return false;
  }
  return true;
}
