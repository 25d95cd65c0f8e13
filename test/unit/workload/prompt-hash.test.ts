import { expect, test } from "bun:test";
import { buildPrompts, hashPromptSet } from "../../../src/workload/prompts.ts";
import { PyRandom } from "../../../src/workload/rng.ts";

const population = Uint32Array.from({ length: 500 }, (_, i) => i * 3);
const build = (seed: bigint, pct = 50, numPrompts = 4) => buildPrompts({ population, totalTokens: 100, pct, numPrompts, rng: new PyRandom(seed) });

test("equal prompt sets hash equal; any changed id, count or split changes the hash", () => {
  const a = build(42n);
  expect(hashPromptSet(a)).toMatch(/^[0-9a-f]{16}$/);
  expect(hashPromptSet(build(42n))).toBe(hashPromptSet(a));
  expect(hashPromptSet(build(43n))).not.toBe(hashPromptSet(a));
  expect(hashPromptSet(build(42n, 50, 5))).not.toBe(hashPromptSet(a));
  const changed = build(42n);
  changed.suffixes[changed.suffixes.length - 1]! ^= 1;
  expect(hashPromptSet(changed)).not.toBe(hashPromptSet(a));
  // The same ids split differently between prefix and suffix are different prompts.
  const whole = { ...a, prefix: a.prefix.subarray(0, 10), prefixLen: 10 };
  expect(hashPromptSet(whole)).not.toBe(hashPromptSet(a));
});
