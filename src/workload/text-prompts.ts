/**
 * Text prompts for APIs that take no token ids (chat): each prompt is the text its ids decode to, the shared prefix
 * text followed by the prompt's own suffix text, so every prompt starts with exactly the same characters.
 *
 * A text round trip can move token boundaries (the server re-tokenizes; BPE merges across what were separate ids),
 * so the prefix the server actually shares is checked, not assumed: the prefix text is re-tokenized once, and for
 * each prompt the stretch around the prefix/suffix boundary (the only place two prompts' tokenizations of a common
 * prefix can part), giving how many leading tokens each prompt shares with the prefix as the server will see it.
 * What the server caches for a prompt depends on what its slot held before (the warm prefix followed by the chat
 * template's closing text, or another prompt), so only the tokens before the prefix's last word are certain:
 * `stableTokens` is how many stay put whatever follows the prefix text (every suffix, and a few typical template
 * continuations). The text is tokenized as it sits in a chat template, after a newline (chatml, Llama-3 and Qwen
 * heads end in one), not at the start of a text, where some tokenizers add a space (SentencePiece's "▁").
 */
import type { PromptSet } from "./prompts.ts";
import { suffixIds } from "./prompts.ts";

/** The tokenizer operations the check needs. */
export interface TextCodec {
  decode(ids: ArrayLike<number>): string;
  encode(text: string): Uint32Array;
}

export interface TextPrompts {
  prefixText: string;
  suffixTexts: string[];
  /** Tokens of the re-tokenized prefix text (against set.prefixLen ids it was decoded from). */
  prefixTokens: number;
  /** First position where the re-tokenized prefix differs from the prefix ids; -1 when they are equal. */
  prefixDriftAt: number;
  /** Per prompt: leading tokens the re-tokenized prompt shares with the re-tokenized prefix. */
  sharedTokens: Int32Array;
  /** Leading prefix tokens that no continuation seen moved: every prompt shares at least these with any other. */
  stableTokens: number;
}

/** Texts that commonly follow a chat message's content in templates (chatml, Llama-3, Mistral, ...). */
const TEMPLATE_CONTINUATIONS = ["<|im_end|>\n", "<|eot_id|>", "</s>", "[/INST]", "\n", " ", "a", "0", "."];

/** Prefix tokens kept in each boundary window: a boundary merge reaches back a word or two, never this far. */
const WINDOW_BACK_TOKENS = 32;
/** Suffix ids decoded into each window: the window's own end is far enough past the boundary not to matter. */
const WINDOW_AHEAD_IDS = 64;

export function buildTextPrompts(set: PromptSet, decoder: TextCodec): TextPrompts {
  const codec = embedded(decoder);
  const prefixText = codec.decode(set.prefix);
  const prefixIds = codec.encode(prefixText);
  const suffixTexts: string[] = [];
  for (let i = 0; i < set.numPrompts; i++) suffixTexts.push(codec.decode(suffixIds(set, i)));
  const cut = windowCut(prefixText, prefixIds, codec);
  const tailIds = prefixIds.subarray(cut.tokens);
  const sharedAfter = (continuation: string): number => cut.tokens + commonPrefix(codec.encode(prefixText.slice(cut.chars) + continuation), tailIds);
  const sharedTokens = new Int32Array(set.numPrompts);
  let stableTokens = prefixIds.length;
  for (let i = 0; i < set.numPrompts; i++) {
    if (prefixIds.length === 0) continue;
    sharedTokens[i] = sharedAfter(codec.decode(suffixIds(set, i).subarray(0, WINDOW_AHEAD_IDS)));
    stableTokens = Math.min(stableTokens, sharedTokens[i]!);
  }
  if (prefixIds.length > 0) for (const text of TEMPLATE_CONTINUATIONS) stableTokens = Math.min(stableTokens, sharedAfter(text));
  return { prefixText, suffixTexts, prefixTokens: prefixIds.length, prefixDriftAt: driftAt(prefixIds, set.prefix), sharedTokens, stableTokens };
}

/**
 * Where the boundary windows start: after `tokens` re-tokenized prefix tokens, which are the first `chars`
 * characters of the prefix text. A cut is usable when those tokens decode to exactly that text and the rest of the
 * prefix re-tokenizes alone into the same tokens (so no merge crosses it); otherwise the window starts at 0.
 */
function windowCut(prefixText: string, prefixIds: Uint32Array, codec: TextCodec): { tokens: number; chars: number } {
  for (let tokens = prefixIds.length - WINDOW_BACK_TOKENS; tokens > 0; tokens -= WINDOW_BACK_TOKENS) {
    const head = codec.decode(prefixIds.subarray(0, tokens));
    if (!prefixText.startsWith(head)) continue;
    const rest = codec.encode(prefixText.slice(head.length));
    if (commonPrefix(rest, prefixIds.subarray(tokens)) === prefixIds.length - tokens && rest.length === prefixIds.length - tokens) {
      return { tokens, chars: head.length };
    }
  }
  return { tokens: 0, chars: 0 };
}

/** The codec, encoding text as it follows a newline (the tokens of the newline itself dropped). */
function embedded(codec: TextCodec): TextCodec {
  const lead = codec.encode("\n");
  return {
    decode: (ids) => codec.decode(ids),
    encode: (text) => {
      const ids = codec.encode("\n" + text);
      // A text that starts with whitespace may merge with the newline: then it is tokenized alone.
      return commonPrefix(ids, lead) === lead.length ? ids.subarray(lead.length) : codec.encode(text);
    },
  };
}

function commonPrefix(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

function driftAt(retokenized: Uint32Array, ids: Uint32Array): number {
  const common = commonPrefix(retokenized, ids);
  return common === retokenized.length && common === ids.length ? -1 : common;
}
