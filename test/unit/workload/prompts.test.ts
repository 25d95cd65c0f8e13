import { describe, expect, test } from "bun:test";
import { buildPrompts, formatPromptDump, promptIds, serializeIds, suffixIds } from "../../../src/workload/prompts.ts";
import { PyRandom } from "../../../src/workload/rng.ts";
import expected from "../../fixtures/workload/py-prompts.json";

const range = (start: number, stop: number, step: number): Uint32Array =>
  Uint32Array.from({ length: Math.ceil((stop - start) / step) }, (_, i) => start + i * step);

const POPULATION = range(expected.population.start, expected.population.stop, expected.population.step);

describe("buildPrompts lengths", () => {
  test.each([
    [0, 1001, 0],
    [1, 1001, 10],
    [33, 1001, 330],
    [50, 1001, 500],
    [99, 1001, 990],
    [100, 1001, 1001],
    [33, 7, 2],
    [99, 1, 0],
    [100, 0, 0],
    [97, 70000, 67900],
  ])("pct %p of %p tokens: prefix %p", (pct, totalTokens, prefixLen) => {
    const set = buildPrompts({ population: POPULATION, totalTokens, pct, numPrompts: 3, rng: new PyRandom(1n) });
    expect(set.prefixLen).toBe(prefixLen);
    expect(set.suffixLen).toBe(totalTokens - prefixLen);
    expect(set.prefix.length).toBe(prefixLen);
    expect(set.suffixes.length).toBe(3 * (totalTokens - prefixLen));
    for (let i = 0; i < 3; i++) expect(promptIds(set, i).length).toBe(totalTokens);
  });

  test("every prompt starts with the same prefix and the suffixes differ", () => {
    const set = buildPrompts({ population: POPULATION, totalTokens: 501, pct: 60, numPrompts: 4, rng: new PyRandom(42n) });
    const prompts = [0, 1, 2, 3].map((i) => promptIds(set, i));
    for (const ids of prompts) expect(Array.from(ids.subarray(0, set.prefixLen))).toEqual(Array.from(set.prefix));
    const suffixKeys = new Set(prompts.map((ids) => ids.subarray(set.prefixLen).join(",")));
    expect(suffixKeys.size).toBe(4);
    expect(Array.from(suffixIds(set, 2))).toEqual(Array.from(prompts[2]!.subarray(set.prefixLen)));
  });

  test("ids come from the population only", () => {
    const population = Uint32Array.from([5, 17, 40000]);
    const set = buildPrompts({ population, totalTokens: 200, pct: 50, numPrompts: 2, rng: new PyRandom(3n) });
    const seen = new Set([...set.prefix, ...set.suffixes]);
    expect([...seen].sort((a, b) => a - b)).toEqual([5, 17, 40000]);
  });

  test("invalid parameters throw", () => {
    const base = { population: POPULATION, totalTokens: 10, pct: 50, numPrompts: 1, rng: new PyRandom(1n) };
    expect(() => buildPrompts({ ...base, pct: 101 })).toThrow("pct");
    expect(() => buildPrompts({ ...base, pct: -1 })).toThrow("pct must be an integer in [0, 100], got -1");
    expect(() => buildPrompts({ ...base, pct: 12.5 })).toThrow("pct");
    expect(() => buildPrompts({ ...base, totalTokens: -1 })).toThrow("totalTokens");
    expect(() => buildPrompts({ ...base, numPrompts: 1.5 })).toThrow("numPrompts");
    expect(() => promptIds(buildPrompts(base), 1)).toThrow(RangeError);
    expect(() => promptIds(buildPrompts(base), -1)).toThrow(RangeError);
    expect(() => promptIds(buildPrompts(base), 0.5)).toThrow(RangeError);
  });
});

describe("buildPrompts matches the Python script's draws", () => {
  test("four pcts sharing one RNG, in the script's order", () => {
    const rng = new PyRandom(BigInt(expected.seed));
    expect(expected.sets.length).toBeGreaterThanOrEqual(2);
    for (const want of expected.sets) {
      const set = buildPrompts({ population: POPULATION, totalTokens: expected.totalTokens, pct: want.pct, numPrompts: expected.numPrompts, rng });
      expect(set.prefixLen).toBe(want.prefixLen);
      expect(set.suffixLen).toBe(want.suffixLen);
      expect(Array.from(set.prefix)).toEqual(want.prefix);
      expect(want.suffixes.map((_, i) => Array.from(suffixIds(set, i)))).toEqual(want.suffixes);
    }
  });

  test("the same seed gives the same prompts; another seed does not", () => {
    const make = (seed: bigint) => buildPrompts({ population: POPULATION, totalTokens: 100, pct: 30, numPrompts: 2, rng: new PyRandom(seed) });
    expect(Array.from(make(7n).suffixes)).toEqual(Array.from(make(7n).suffixes));
    expect(Array.from(make(7n).suffixes)).not.toEqual(Array.from(make(8n).suffixes));
  });
});

describe("serializeIds", () => {
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

  test("round-trips through JSON.parse, digit-count boundaries included", () => {
    const edges = [0, 1, 9, 10, 99, 100, 999, 1000, 9999, 10000, 99999, 100000, 151668, 999999, 1000000, 9999999, 10000000];
    const ids = Uint32Array.from([...edges, 99999999, 100000000, 999999999, 1000000000, 4294967295]);
    const text = decode(serializeIds(ids));
    expect(JSON.parse(`[${text}]`)).toEqual(Array.from(ids));
    expect(text).toBe(Array.from(ids).join(","));
  });

  test("empty and single", () => {
    expect(serializeIds(new Uint32Array(0)).length).toBe(0);
    expect(decode(serializeIds(Uint32Array.of(42)))).toBe("42");
  });

  test("a real-size prompt round-trips", () => {
    const set = buildPrompts({ population: range(0, 151669, 1), totalTokens: 70000, pct: 50, numPrompts: 1, rng: new PyRandom(42n) });
    const ids = promptIds(set, 0);
    expect(JSON.parse(`[${decode(serializeIds(ids))}]`)).toEqual(Array.from(ids));
  });
});

describe("formatPromptDump", () => {
  test("one JSON line per prompt with the script's field names", () => {
    const set = buildPrompts({ population: POPULATION, totalTokens: 9, pct: 33, numPrompts: 3, rng: new PyRandom(5n) });
    const text = formatPromptDump(set);
    expect(text.endsWith("\n")).toBe(true);
    const lines = text.trimEnd().split("\n");
    expect(lines.length).toBe(3);
    lines.forEach((line, i) => {
      const parsed = JSON.parse(line);
      expect(Object.keys(parsed)).toEqual(["shared_prefix_pct", "index", "prefix_len", "suffix_len", "input_ids"]);
      expect(parsed).toEqual({ shared_prefix_pct: 33, index: i, prefix_len: 2, suffix_len: 7, input_ids: Array.from(promptIds(set, i)) });
    });
  });

  test("pct 0 and 100: no empty element from the missing part", () => {
    for (const pct of [0, 100]) {
      const set = buildPrompts({ population: POPULATION, totalTokens: 4, pct, numPrompts: 2, rng: new PyRandom(5n) });
      const lines = formatPromptDump(set)
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(lines.map((l) => l.input_ids)).toEqual([Array.from(promptIds(set, 0)), Array.from(promptIds(set, 1))]);
      expect(lines[0].input_ids.length).toBe(4);
    }
  });

  test("zero-length prompts give empty arrays", () => {
    const set = buildPrompts({ population: POPULATION, totalTokens: 0, pct: 50, numPrompts: 1, rng: new PyRandom(5n) });
    expect(formatPromptDump(set)).toBe('{"shared_prefix_pct":50,"index":0,"prefix_len":0,"suffix_len":0,"input_ids":[]}\n');
  });
});
