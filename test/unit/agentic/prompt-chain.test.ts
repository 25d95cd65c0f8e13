import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BlockSource } from "../../../src/replay/blocks.ts";
import { promptChain, traceNamespace } from "../../../src/workload/agentic/prompt-chain.ts";
import type { AgenticCall, AgenticStep } from "../../../src/workload/agentic/session-tree.ts";
import { parseWekaTraces } from "../../../src/workload/agentic/weka-trace.ts";

const population = Uint32Array.from({ length: 50_000 }, (_, i) => i + 100);
const source = () => new BlockSource(population, 7n, 64);
const commonPrefix = (a: Uint32Array, b: Uint32Array): number => {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
};
const calls = (steps: AgenticStep[]): AgenticCall[] => steps.flatMap((s) => (s.kind === "call" ? [s] : calls(s.steps)));
const trace = parseWekaTraces("t", readFileSync(join(import.meta.dir, "../../fixtures/agentic/trace_0291.json"), "utf8"))[0]!;

describe("prompt chains through the replay's BlockSource", () => {
  const cs = calls(trace.steps);
  const ns = traceNamespace(trace, 0, 0);

  test("every prompt has exactly `in` ids, and two calls share exactly their shared full blocks", () => {
    const blocks = source();
    const prompts = cs.map((c, k) => blocks.prompt(promptChain(c, 64, ns, k)));
    expect(prompts.map((p) => p.length)).toEqual(cs.map((c) => c.inputLength));
    for (let k = 1; k < cs.length; k++) {
      const a = cs[k - 1]!.hashIds;
      const b = cs[k]!.hashIds;
      let shared = 0;
      while (shared < a.length && shared < b.length && a[shared] === b[shared]) shared++;
      // Shared blocks are the same tokens; the first differing block (or tail) differs from its first token on.
      expect(commonPrefix(prompts[k - 1]!, prompts[k]!)).toBe(shared * 64);
    }
  });

  test("the tail (in mod 64) is drawn per request: the same blocks with two ordinals differ only in the tail", () => {
    const blocks = source();
    const c = cs[0]!;
    expect(c.inputLength % 64).toBeGreaterThan(0);
    const a = blocks.prompt(promptChain(c, 64, ns, 0));
    const b = blocks.prompt(promptChain(c, 64, ns, 1));
    expect(commonPrefix(a, b)).toBe(c.hashIds.length * 64);
  });

  test("clones and other local traces get their own namespace: no shared token from the first on", () => {
    const blocks = source();
    const c = cs[3]!;
    const first = blocks.prompt(promptChain(c, 64, traceNamespace(trace, 0, 0), 3));
    const clone = blocks.prompt(promptChain(c, 64, traceNamespace(trace, 8, 1), 3));
    const other = blocks.prompt(promptChain(c, 64, traceNamespace(trace, 1, 0), 3));
    expect(commonPrefix(first, clone)).toBe(0);
    expect(commonPrefix(first, other)).toBe(0);
    // The same instance draws the same tokens again (and in another run with the same seed).
    expect(commonPrefix(first, source().prompt(promptChain(c, 64, traceNamespace(trace, 0, 0), 3)))).toBe(c.inputLength);
  });

  test("global scope: traces of one pass share a namespace, the next pass (clones) gets another", () => {
    const g = { hashIdScope: "global" as const };
    expect(traceNamespace(g, 0, 0)).toBe(traceNamespace(g, 5, 0));
    expect(traceNamespace(g, 0, 0)).not.toBe(traceNamespace(g, 9, 1));
    const local = new Set([0, 1, 2].map((i) => traceNamespace(trace, i, 0)));
    expect(local.size).toBe(3);
    expect(local.has(traceNamespace(g, 0, 0))).toBe(false);
  });

  test("a trailing partial block named in the trace takes no extra tail id", () => {
    expect(promptChain({ inputLength: 130, hashIds: [1, 2, 3] }, 64, 1, 0).hashIds.length).toBe(3);
    expect(promptChain({ inputLength: 128, hashIds: [1, 2] }, 64, 1, 0).hashIds.length).toBe(2);
    expect(promptChain({ inputLength: 130, hashIds: [1, 2] }, 64, 1, 0).hashIds.length).toBe(3);
  });
});
