/**
 * What the classification of one OpenAI-compatible chunk needs (openai-events.ts), as every reader of a chunk
 * reduces it: the native-search reader of the plain shape (openai-plain.ts), the structural walk
 * (openai-walk.ts) and JSON.parse. One scratch object, reused: a scan is synchronous.
 */

export const CHOICES_NONE = 0; // absent, null or not an array
export const CHOICES_EMPTY = 1; // [] (the usage-only chunk)
export const CHOICES_SOME = 2;

export interface ChunkFacts {
  /** The message of a non-null `error`; null when there is none. */
  error: string | null;
  /** CHOICES_NONE, CHOICES_EMPTY or CHOICES_SOME. */
  choices: number;
  /** choices[0].finish_reason when it is a string. */
  finishType: string | null;
  /** usage is an object. */
  usage: boolean;
  /** usage.completion_tokens; -1 when absent. */
  usageTokens: number;
  /** usage.prompt_tokens_details.cached_tokens; -1 when absent. */
  cachedTokens: number;
  /**
   * choices[0].text (completions) or choices[0].delta.content (chat) as raw JSON string content
   * (payload[textStart, textEnd)); -1 when absent or not a string.
   */
  textStart: number;
  textEnd: number;
  /** timings.cache_n (llama.cpp's cached prompt tokens, equal to cached_tokens where both are sent); -1 when absent. */
  timingsCached: number;
  /** choices[0] has a `delta` object: a chat chunk, whose role-only and closing chunks carry no token. */
  delta: boolean;
}

/** The one scratch object every reader fills. */
export const facts: ChunkFacts = {
  error: null,
  choices: CHOICES_NONE,
  finishType: null,
  usage: false,
  usageTokens: -1,
  cachedTokens: -1,
  textStart: -1,
  textEnd: -1,
  timingsCached: -1,
  delta: false,
};

export function resetFacts(): void {
  facts.error = null;
  facts.choices = CHOICES_NONE;
  facts.finishType = null;
  facts.usage = false;
  facts.usageTokens = -1;
  facts.cachedTokens = -1;
  facts.textStart = -1;
  facts.textEnd = -1;
  facts.timingsCached = -1;
  facts.delta = false;
}
