/**
 * The exact reader of an OpenAI-compatible chunk: a structural walk over its bytes (json-bytes.ts). It follows the
 * object's members in order and skips every value it does not read (strings by a search for their closing
 * quote), so a key is only ever matched where a key is: the generated text (a string value, which comes before
 * `usage` in vLLM's chunks) and the token-keyed `top_logprobs` maps are skipped whole, whatever they contain.
 * It reads `choices[0].text` (its bounds only; in a chat chunk `choices[0].delta.content`),
 * `choices[0].finish_reason`, `usage.completion_tokens` and `usage.prompt_tokens_details.cached_tokens` into `facts`. Keys are compared as written: an escaped key name
 * (`"te\u0078t"`) is not its decoded name here, as no server writes one.
 */
import { bytesEqual, hasBackslash, numberEnd, onlyBlanksAfter, plainUint, QUOTE, skipBlanks, skipValue, walkArrayFirst, walkObject } from "./json-bytes.ts";
import { CHOICES_EMPTY, CHOICES_NONE, CHOICES_SOME, facts, resetFacts } from "./openai-facts.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Read in full. */
export const WALK_PLAIN = 0;
/** Well formed, but a value needs JSON.parse (the text bounds are still right). */
export const WALK_UNUSUAL = 1;
/** Not followed: JSON.parse decides (and says what is wrong). */
export const WALK_SYNTAX = 2;

const CHOICES = encoder.encode("choices");
const USAGE = encoder.encode("usage");
const TIMINGS = encoder.encode("timings");
const CACHE_N = encoder.encode("cache_n");
const ERROR = encoder.encode("error");
const TEXT = encoder.encode("text");
const DELTA = encoder.encode("delta");
const CONTENT = encoder.encode("content");
const FINISH_REASON = encoder.encode("finish_reason");
const COMPLETION_TOKENS = encoder.encode("completion_tokens");
const PROMPT_TOKENS_DETAILS = encoder.encode("prompt_tokens_details");
const CACHED_TOKENS = encoder.encode("cached_tokens");
const NULL_FIRST_BYTE = 110; // "n": a value starting so is null once skipValue accepted it
const LBRACE = 123;
const LBRACKET = 91;

/** The walk's own state, beside the facts: an object property is cheaper to reach than a module `let`. */
const walk = {
  /** A value needs JSON.parse. */
  unusual: false,
  /** The integer readCount read; -1 when the value is not a number. */
  count: -1,
};

/** Fills `facts` from the chunk: WALK_PLAIN, WALK_UNUSUAL (read, but a value needs JSON.parse) or WALK_SYNTAX. */
export function walkOpenaiChunk(payload: Uint8Array): number {
  resetFacts();
  walk.unusual = false;
  const end = walkObject(payload, skipBlanks(payload, 0), visitTop);
  if (end === -1 || !onlyBlanksAfter(payload, end)) return WALK_SYNTAX;
  return walk.unusual ? WALK_UNUSUAL : WALK_PLAIN;
}

function visitTop(bytes: Uint8Array, keyStart: number, keyEnd: number, valueAt: number): number {
  if (bytesEqual(bytes, keyStart, keyEnd, CHOICES)) return readChoices(bytes, valueAt);
  if (bytesEqual(bytes, keyStart, keyEnd, USAGE)) return readUsage(bytes, valueAt);
  if (bytesEqual(bytes, keyStart, keyEnd, TIMINGS) && bytes[valueAt] === LBRACE) {
    facts.timingsCached = -1;
    return walkObject(bytes, valueAt, visitTimings);
  }
  const end = skipValue(bytes, valueAt);
  if (bytesEqual(bytes, keyStart, keyEnd, ERROR) && bytes[valueAt] !== NULL_FIRST_BYTE) walk.unusual = true;
  return end;
}

function readChoices(bytes: Uint8Array, at: number): number {
  // A repeated key counts by its last occurrence, as in JSON.parse.
  facts.choices = CHOICES_NONE;
  facts.finishType = null;
  facts.textStart = -1;
  facts.textEnd = -1;
  facts.delta = false;
  if (bytes[at] !== LBRACKET) return skipValue(bytes, at);
  facts.choices = CHOICES_EMPTY;
  return walkArrayFirst(bytes, at, readFirstChoice);
}

function readFirstChoice(bytes: Uint8Array, at: number): number {
  facts.choices = CHOICES_SOME;
  return bytes[at] === LBRACE ? walkObject(bytes, at, visitChoice) : skipValue(bytes, at);
}

function visitChoice(bytes: Uint8Array, keyStart: number, keyEnd: number, valueAt: number): number {
  if (bytesEqual(bytes, keyStart, keyEnd, DELTA) && bytes[valueAt] === LBRACE) {
    facts.delta = true;
    facts.textStart = -1;
    facts.textEnd = -1;
    return walkObject(bytes, valueAt, visitDelta);
  }
  const end = skipValue(bytes, valueAt);
  if (end === -1) return -1;
  const isString = bytes[valueAt] === QUOTE;
  if (bytesEqual(bytes, keyStart, keyEnd, TEXT)) {
    facts.textStart = isString ? valueAt + 1 : -1;
    facts.textEnd = isString ? end - 1 : -1;
  } else if (bytesEqual(bytes, keyStart, keyEnd, FINISH_REASON)) {
    facts.finishType = null;
    if (isString) {
      if (hasBackslash(bytes, valueAt + 1, end - 1)) walk.unusual = true;
      else facts.finishType = decoder.decode(bytes.subarray(valueAt + 1, end - 1));
    }
  }
  return end;
}

/** A chat chunk's delta: its `content` is the text (null in the role-only chunk). */
function visitDelta(bytes: Uint8Array, keyStart: number, keyEnd: number, valueAt: number): number {
  const end = skipValue(bytes, valueAt);
  if (end !== -1 && bytesEqual(bytes, keyStart, keyEnd, CONTENT)) {
    const isString = bytes[valueAt] === QUOTE;
    facts.textStart = isString ? valueAt + 1 : -1;
    facts.textEnd = isString ? end - 1 : -1;
  }
  return end;
}

function readUsage(bytes: Uint8Array, at: number): number {
  facts.usage = false;
  facts.usageTokens = -1;
  facts.cachedTokens = -1;
  if (bytes[at] !== LBRACE) return skipValue(bytes, at);
  facts.usage = true;
  return walkObject(bytes, at, visitUsage);
}

function visitUsage(bytes: Uint8Array, keyStart: number, keyEnd: number, valueAt: number): number {
  if (bytesEqual(bytes, keyStart, keyEnd, COMPLETION_TOKENS)) {
    const end = readCount(bytes, valueAt);
    facts.usageTokens = walk.count;
    return end;
  }
  if (bytesEqual(bytes, keyStart, keyEnd, PROMPT_TOKENS_DETAILS)) {
    facts.cachedTokens = -1;
    return bytes[valueAt] === LBRACE ? walkObject(bytes, valueAt, visitDetails) : skipValue(bytes, valueAt);
  }
  return skipValue(bytes, valueAt);
}

function visitDetails(bytes: Uint8Array, keyStart: number, keyEnd: number, valueAt: number): number {
  if (!bytesEqual(bytes, keyStart, keyEnd, CACHED_TOKENS)) return skipValue(bytes, valueAt);
  const end = readCount(bytes, valueAt);
  facts.cachedTokens = walk.count;
  return end;
}

/** llama.cpp's timings: cache_n, the prompt tokens served from the slot's cache. */
function visitTimings(bytes: Uint8Array, keyStart: number, keyEnd: number, valueAt: number): number {
  if (!bytesEqual(bytes, keyStart, keyEnd, CACHE_N)) return skipValue(bytes, valueAt);
  const end = readCount(bytes, valueAt);
  facts.timingsCached = walk.count;
  return end;
}

/**
 * Reads a token count into walk.count and returns the value's end: a plain integer as is; any other number is
 * unusual (JSON.parse keeps its exact value); a non-number counts as absent (-1), as in the parsed reading.
 */
function readCount(bytes: Uint8Array, at: number): number {
  const first = bytes[at];
  const isNumber = first === 45 || (first !== undefined && first >= 48 && first <= 57);
  if (!isNumber) {
    walk.count = -1;
    return skipValue(bytes, at);
  }
  const end = numberEnd(bytes, at);
  walk.count = end === -1 ? -1 : plainUint(bytes, at, end);
  if (end !== -1 && walk.count === -1) walk.unusual = true;
  return end;
}
