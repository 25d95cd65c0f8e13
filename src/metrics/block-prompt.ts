/**
 * A prompt as the cache models see it: its length and its blocks, each named by a hash id that fixes the block and
 * every block before it (a Mooncake trace's hash_ids; a sweep's or a conversation's pages, hashed the same way), so
 * two prompts share a prefix exactly as far as they share leading hash ids.
 */
export interface BlockPrompt {
  /** The request's place (its index in the line or trace). */
  index: number;
  inputLength: number;
  outputLength: number;
  hashIds: readonly number[];
}
