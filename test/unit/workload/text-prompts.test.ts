/** Text prompts (chat) with real tokenizers: exact texts, and the prefix the server's re-tokenization keeps. */
import { describe, expect, test } from "bun:test";
import { buildPrompts, suffixIds } from "../../../src/workload/prompts.ts";
import { PyRandom } from "../../../src/workload/rng.ts";
import { buildTextPrompts, type TextCodec } from "../../../src/workload/text-prompts.ts";
import { loadTokenizer } from "../../../src/workload/tokenizer.ts";
import { LLAMA2_TOKENIZER, QWEN3_TOKENIZER } from "../../helpers/run-cli.ts";

const commonPrefix = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
  let i = 0;
  while (i < Math.min(a.length, b.length) && a[i] === b[i]) i++;
  return i;
};

for (const [name, path] of [
  ["Llama-2 (SentencePiece)", LLAMA2_TOKENIZER],
  ["Qwen3 (byte-level BPE)", QWEN3_TOKENIZER],
] as const) {
  describe(`text prompts, ${name}`, async () => {
    const tokenizer = await loadTokenizer(path, { revision: "main" });
    const set = buildPrompts({ population: tokenizer.population, totalTokens: 300, pct: 70, numPrompts: 6, rng: new PyRandom(5n) });
    const text = buildTextPrompts(set, tokenizer);

    test("each prompt's text is the prefix text then its suffix text, decoded from its ids", () => {
      expect(text.prefixText).toBe(tokenizer.decode(set.prefix));
      for (let i = 0; i < set.numPrompts; i++) expect(text.suffixTexts[i]).toBe(tokenizer.decode(suffixIds(set, i)));
    });

    test("the shared tokens are what a full re-tokenization after a newline shares with the prefix's", () => {
      const lead = tokenizer.encode("\n").length;
      const prefixTokens = tokenizer.encode("\n" + text.prefixText).subarray(lead);
      expect(text.prefixTokens).toBe(prefixTokens.length);
      for (let i = 0; i < set.numPrompts; i++) {
        const whole = tokenizer.encode("\n" + text.prefixText + text.suffixTexts[i]).subarray(lead);
        expect(text.sharedTokens[i]).toBe(commonPrefix(whole, prefixTokens));
      }
      expect(text.stableTokens).toBeLessThanOrEqual(Math.min(...text.sharedTokens));
      // A random id sequence does not survive a text round trip, and the check says where it moved.
      expect(text.prefixDriftAt).toBeGreaterThanOrEqual(0);
      expect(text.prefixDriftAt).toBeLessThan(set.prefixLen);
    });
  });
}

describe("text prompts: the boundary", () => {
  // A toy codec: one id per character, and "ab" merges into one token wherever it appears.
  const toy: TextCodec = {
    decode: (ids) => Array.from(ids, (id) => (id === 999 ? "ab" : String.fromCharCode(id))).join(""),
    encode: (text) => {
      const out: number[] = [];
      for (let i = 0; i < text.length; i++) {
        if (text[i] === "a" && text[i + 1] === "b") {
          out.push(999);
          i++;
        } else out.push(text.charCodeAt(i));
      }
      return Uint32Array.from(out);
    },
  };
  const code = (s: string) => Uint32Array.from(s, (c) => c.charCodeAt(0));

  test("a suffix that merges with the prefix's last character shares one token less; stable counts only what never moves", () => {
    const set = { pct: 50, prefixLen: 4, suffixLen: 2, numPrompts: 2, prefix: code("xyza"), prefixes: [code("xyza")], suffixes: code("bcde"), idsHash: "" };
    const text = buildTextPrompts(set, toy);
    expect(text.prefixTokens).toBe(4);
    expect(Array.from(text.sharedTokens)).toEqual([3, 4]); // "xyza"+"bc" -> x y z ab c; "xyza"+"de" keeps all
    expect(text.stableTokens).toBe(3);
    expect(text.prefixDriftAt).toBe(-1);
  });

  test("an empty prefix shares nothing", () => {
    const set = {
      pct: 0,
      prefixLen: 0,
      suffixLen: 2,
      numPrompts: 1,
      prefix: new Uint32Array(0),
      prefixes: [new Uint32Array(0)],
      suffixes: code("ab"),
      idsHash: "",
    };
    const text = buildTextPrompts(set, toy);
    expect(text.prefixText).toBe("");
    expect(Array.from(text.sharedTokens)).toEqual([0]);
    expect(text.stableTokens).toBe(0);
  });
});
