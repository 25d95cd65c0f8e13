import { expect, test } from "bun:test";
import { buildPrompts, promptIdsHash } from "../../../src/workload/prompts.ts";
import { PyRandom } from "../../../src/workload/rng.ts";

const population = Uint32Array.from({ length: 500 }, (_, i) => i * 3);
const build = (seed: bigint, pct = 50, numPrompts = 4, workingSet = 1, rng = new PyRandom(seed)) =>
  buildPrompts({ population, totalTokens: 100, pct, numPrompts, rng, workingSet });

test("equal prompt sets hash equal; another seed, count, split, working set or earlier draw changes the hash", () => {
  const a = build(42n);
  expect(a.idsHash).toMatch(/^[0-9a-f]{16}$/);
  expect(build(42n).idsHash).toBe(a.idsHash);
  expect(build(43n).idsHash).not.toBe(a.idsHash);
  expect(build(42n, 50, 5).idsHash).not.toBe(a.idsHash);
  expect(build(42n, 60).idsHash).not.toBe(a.idsHash);
  expect(build(42n, 50, 4, 2).idsHash).not.toBe(a.idsHash);
  // The same pct after an earlier one (the generator moved on) is other prompts.
  const rng = new PyRandom(42n);
  build(42n, 10, 1, 1, rng);
  expect(build(42n, 50, 4, 1, rng).idsHash).not.toBe(a.idsHash);
});

test("the hash is of the ids: another population, or one changed prefix id, changes it", () => {
  const a = build(7n);
  const rng = new PyRandom(7n);
  const prefix = new Uint32Array(50);
  rng.choicesInto(population, prefix, 0, 50);
  expect(promptIdsHash({ population, prefixes: [prefix], afterPrefixes: rng, suffixLen: 50, count: 4 })).toBe(a.idsHash);
  const other = population.map((v) => v + 1);
  expect(promptIdsHash({ population: other, prefixes: [prefix], afterPrefixes: rng, suffixLen: 50, count: 4 })).not.toBe(a.idsHash);
  // The suffix ids are the generator's next draws: a generator one draw further on is other suffixes.
  const moved = rng.clone();
  moved.random();
  expect(promptIdsHash({ population, prefixes: [prefix], afterPrefixes: moved, suffixLen: 50, count: 4 })).not.toBe(a.idsHash);
  // The same draws split at another place between prompts are other prompts.
  expect(promptIdsHash({ population, prefixes: [prefix], afterPrefixes: rng, suffixLen: 25, count: 8 })).not.toBe(a.idsHash);
  prefix[0]! ^= 1;
  expect(promptIdsHash({ population, prefixes: [prefix], afterPrefixes: rng, suffixLen: 50, count: 4 })).not.toBe(a.idsHash);
});
