import { describe, expect, test } from "bun:test";
import { BlockSource, blockSeed } from "../../../src/replay/blocks.ts";
import { generateTrace } from "../../helpers/mooncake-trace.ts";

const population = Uint32Array.from({ length: 5000 }, (_, i) => i * 3);
const B = 32;
const lines = generateTrace({
  blockSize: B,
  systems: 2,
  systemBlocks: 3,
  conversations: 6,
  turns: 4,
  maxTurnTokens: 70,
  turnGapMs: 100,
  startGapMs: 10,
  outputLength: 2,
  seed: 7,
});

/** Leading ids two arrays share. */
function commonIds(a: Uint32Array, b: Uint32Array): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

describe("BlockSource", () => {
  test("a prompt has exactly input_length ids, its blocks in order, the last cut", () => {
    const src = new BlockSource(population, 42n, B);
    for (const l of lines) {
      const ids = src.prompt({ inputLength: l.input_length, hashIds: l.hash_ids });
      expect(ids.length).toBe(l.input_length);
      for (const [j, h] of l.hash_ids.entries())
        expect([...ids.subarray(j * B, (j + 1) * B)]).toEqual([...src.block(h).subarray(0, Math.min(B, l.input_length - j * B))]);
    }
    expect(lines.some((l) => l.input_length % B !== 0)).toBe(true);
  });

  test("two prompts share exactly the tokens their hash ids share", () => {
    const src = new BlockSource(population, 42n, B);
    const prompts = lines.map((l) => src.prompt({ inputLength: l.input_length, hashIds: l.hash_ids }));
    let pairs = 0;
    for (let a = 0; a < lines.length; a++) {
      for (let b = 0; b < a; b++) {
        const la = lines[a]!;
        const lb = lines[b]!;
        let j = 0;
        while (j < Math.min(la.hash_ids.length, lb.hash_ids.length) && la.hash_ids[j] === lb.hash_ids[j]) j++;
        // The shared blocks, then nothing: the next blocks differ from their first id on.
        const expected = Math.min(j * B, la.input_length, lb.input_length);
        expect(commonIds(prompts[a]!, prompts[b]!)).toBe(expected);
        if (expected > 0) pairs++;
      }
    }
    expect(pairs).toBeGreaterThan(20);
  });

  test("equal ids give equal blocks in every run; another seed gives other blocks; different ids differ", () => {
    const a = new BlockSource(population, 42n, B);
    const b = new BlockSource(population, 42n, B, null, 1);
    for (const h of [0, 1, 2, 9, 0, 1]) expect([...a.block(h)]).toEqual([...b.block(h)]);
    const other = new BlockSource(population, 43n, B);
    expect([...other.block(5)]).not.toEqual([...a.block(5)]);
    expect(other.block(5)[0]).toBe(a.block(5)[0]!);
    const firsts = new Set(Array.from({ length: 1000 }, (_, h) => a.block(h)[0]));
    expect(firsts.size).toBe(1000);
    const reserving = new BlockSource(population, 42n, B, 7);
    const reservedFirsts = Array.from({ length: population.length - 1 }, (_, h) => reserving.block(h)[0]);
    expect(new Set(reservedFirsts).size).toBe(population.length - 1);
    expect(reservedFirsts).not.toContain(population[7]!);
    expect(blockSeed(-3n, 7)).toBe(blockSeed(3n, 7));
    expect(blockSeed(1n, 0)).not.toBe(blockSeed(0n, 1));
    expect(a.block(1).every((id) => id % 3 === 0 && id < 15000)).toBe(true);
  });
});

describe("BlockSource.promptDigits", () => {
  test("the pieces joined by commas are the prompt's ids, cut in its last block", () => {
    const src = new BlockSource(population, 42n, B);
    for (const l of lines) {
      const req = { inputLength: l.input_length, hashIds: l.hash_ids };
      const text = src
        .promptDigits(req)
        .map((d) => new TextDecoder().decode(d))
        .join(",");
      expect(text).toBe([...src.prompt(req)].join(","));
    }
  });
});
