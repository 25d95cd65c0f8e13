import { describe, expect, test } from "bun:test";
import { buildPrompts, formatPromptDump, serializeIds, suffixIds } from "../../../src/workload/prompts.ts";
import { joinDigits, promptDumpLine, SuffixDrawer } from "../../../src/workload/prompt-draw.ts";
import { PyRandom } from "../../../src/workload/rng.ts";

const POPULATION = Uint32Array.from({ length: 151_643 }, (_, i) => i);
const decoder = new TextDecoder();

describe("SuffixDrawer draws what buildPrompts draws, one prompt at a time", () => {
  test("chunked digits join to each suffix's serialization; heads are the suffixes' first ids", () => {
    const set = buildPrompts({ population: POPULATION, totalTokens: 20_000, pct: 30, numPrompts: 5, rng: new PyRandom(9n) });
    const rng = new PyRandom(9n);
    rng.skipRandoms(set.prefixLen);
    // Small chunks so that every suffix spans several.
    const drawer = new SuffixDrawer(POPULATION, rng, set.suffixLen, 3000);
    for (let i = 0; i < 5; i++) {
      const s = drawer.next(65);
      expect(s.chunks.length).toBe(Math.ceil(set.suffixLen / 3000));
      expect(decoder.decode(joinDigits(s.chunks))).toBe(decoder.decode(serializeIds(suffixIds(set, i))));
      expect(s.bytes).toBe(s.chunks.reduce((n, c) => n + c.length, 0));
      expect([...s.head]).toEqual([...suffixIds(set, i).subarray(0, 65)]);
    }
  });

  test("skip(n) leaves the generator where drawing n suffixes would", () => {
    const drawn = new PyRandom(3n);
    const a = new SuffixDrawer(POPULATION, drawn, 777);
    for (let i = 0; i < 4; i++) a.next(0);
    const skipped = new PyRandom(3n);
    new SuffixDrawer(POPULATION, skipped, 777).skip(4);
    expect(skipped.random()).toBe(drawn.random());
  });

  test("the dump line is formatPromptDump's, byte for byte, at pct 0, 50 and 100", () => {
    for (const pct of [0, 50, 100]) {
      const set = buildPrompts({ population: POPULATION, totalTokens: 300, pct, numPrompts: 3, rng: new PyRandom(11n) });
      const rng = new PyRandom(11n);
      const prefix = new Uint32Array(set.prefixLen);
      rng.choicesInto(POPULATION, prefix, 0, set.prefixLen);
      const drawer = new SuffixDrawer(POPULATION, rng, set.suffixLen, 100);
      const lines = [0, 1, 2].map((i) => decoder.decode(promptDumpLine(pct, i, set.prefixLen, set.suffixLen, 1, 0, serializeIds(prefix), drawer.next(0))));
      expect(lines.join("")).toBe(formatPromptDump(set));
    }
  });
});
