/**
 * The mock's chat template and tokenizer: messages become chatml text (what llama-server falls back to for a model
 * without a template), tokenized with --tokenizer's tokenizer.json, or one token per UTF-8 byte without one. The
 * mock's own code: it reads the tokenizer file itself and shares nothing with the client.
 */
import { readFileSync } from "node:fs";
import { Tokenizer } from "@huggingface/tokenizers";

/** One chat message as the request carries it. */
export interface ChatMessage {
  role: string;
  content: string;
}

/** chatml: every message in <|im_start|>role ... <|im_end|>, then the assistant's turn opened. */
export function applyChatTemplate(messages: readonly ChatMessage[]): string {
  let text = "";
  for (const m of messages) text += `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`;
  return text + "<|im_start|>assistant\n";
}

export interface MockTokenizer {
  encode(text: string): number[];
}

/** Text -> ids with a tokenizer.json (no special tokens added), or as UTF-8 bytes (ids 0-255) without one. */
export function loadMockTokenizer(path: string | null): MockTokenizer {
  if (path === null) return { encode: (text) => Array.from(new TextEncoder().encode(text)) };
  try {
    const json = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
    const tokenizer = new Tokenizer({ normalizer: null, pre_tokenizer: null, post_processor: null, decoder: null, added_tokens: [], ...json }, {});
    // A file that parses but holds no vocabulary fails on its first text, which would be a request's: try one now.
    tokenizer.encode("warmbench", { add_special_tokens: false });
    return { encode: (text) => tokenizer.encode(text, { add_special_tokens: false }).ids };
  } catch (err) {
    throw new MockTokenizerError(`--tokenizer ${path}: not a tokenizer.json the mock can load (${(err as Error)?.message ?? String(err)})`);
  }
}

/** A --tokenizer file that is no tokenizer: a usage error of its own, never taken for a failure to listen. */
export class MockTokenizerError extends Error {
  override name = "MockTokenizerError";
}
