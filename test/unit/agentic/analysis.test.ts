import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { analyzeAgentic } from "../../../src/metrics/agentic-analysis.ts";
import type { AgenticStep, AgenticTrace } from "../../../src/workload/agentic/session-tree.ts";
import { parseWekaTraces } from "../../../src/workload/agentic/weka-trace.ts";

const DIR = join(import.meta.dir, "../../fixtures/agentic");
const corpus: AgenticTrace[] = readdirSync(DIR)
  .filter((f) => f.endsWith(".json"))
  .sort()
  .flatMap((f) => parseWekaTraces(f, readFileSync(join(DIR, f), "utf8")));

/** The ceiling computed here from its definition: a block hits when its whole prefix was sent by a call that ended before. */
function ceilingByHand(trace: AgenticTrace): number {
  const calls: { startS: number; endS: number; ids: readonly number[]; input: number }[] = [];
  const walk = (steps: AgenticStep[], origin: number) => {
    for (const s of steps) {
      if (s.kind === "call") calls.push({ startS: origin + s.tS, endS: origin + s.tS + (s.apiTimeS ?? 0), ids: s.hashIds, input: s.inputLength });
      else walk(s.steps, s.tS - (s.durationMs ?? 0) / 1000);
    }
  };
  walk(trace.steps, 0);
  // Calls in send order; those ended before a send are inserted (by end order) into a trie of prefixes first.
  const bySend = [...calls].sort((x, y) => x.startS - y.startS);
  const byEnd = [...calls].sort((x, y) => x.endS - y.endS);
  const trie = new Map<string, number>();
  const held = new Set<number>();
  const descend = (ids: readonly number[], insert: boolean): number => {
    let node = 0;
    let depth = 0;
    for (const id of ids) {
      const key = `${node}:${id}`;
      let next = trie.get(key);
      if (next === undefined) {
        if (!insert) break;
        next = trie.size + 1;
        trie.set(key, next);
      }
      if (insert) held.add(next);
      else if (!held.has(next)) break;
      node = next;
      depth++;
    }
    return depth;
  };
  let hits = 0;
  let input = 0;
  let e = 0;
  for (const c of bySend) {
    while (e < byEnd.length && byEnd[e]!.endS < c.startS) descend(byEnd[e++]!.ids, true);
    hits += descend(c.ids, false) * trace.blockSize;
    input += c.input;
  }
  return hits / input;
}

describe("agentic analysis on the eight real traces", () => {
  const a = analyzeAgentic(corpus, { spawn: "result-minus-duration", pageSize: 1, capacitiesTokens: [] });

  test("subagent shape: counts, depth, fan-out and the recorded concurrency", () => {
    const shape = Object.fromEntries(a.sessions.map((s) => [s.traceId, [s.requests, s.subagents, s.depth, s.fanOut, s.concurrency]]));
    expect(shape).toEqual({
      trace_0007: [12, 0, 0, 0, 0],
      trace_0040: [6, 0, 0, 0, 0],
      trace_0061: [6, 0, 0, 0, 0],
      trace_0087: [24, 0, 0, 0, 0],
      trace_0187: [3, 0, 0, 0, 0],
      // Three Explore agents spawned within 15 ms of each other, then a Plan agent alone.
      trace_0277: [53, 4, 1, 4, 3],
      trace_0291: [32, 2, 1, 2, 2],
      trace_0504: [3, 0, 0, 0, 0],
    });
  });

  test("each session's ceiling is the infinite cache's, as defined (computed here another way)", () => {
    for (const s of a.sessions) {
      const trace = corpus.find((t) => t.id === s.traceId)!;
      expect(Math.abs(s.ceilingHitRatio - ceilingByHand(trace))).toBeLessThan(1e-9);
    }
    expect(a.ceilingHitRatio).toBeGreaterThan(0.5);
    expect(a.ceilingHitRatio).toBeLessThan(1);
  });

  test("the LRU curve rises with capacity and reaches the ceiling at the working set", () => {
    const ws = a.workingSetTokens;
    const curve = analyzeAgentic(corpus, { spawn: "result-minus-duration", pageSize: 16, capacitiesTokens: [1024, ws / 8, ws / 2, ws] }).lru;
    const ratios = curve.map((p) => p.hitRatio);
    for (let i = 1; i < ratios.length; i++) expect(ratios[i]!).toBeGreaterThanOrEqual(ratios[i - 1]!);
    expect(ratios[0]!).toBeLessThan(ratios.at(-1)! - 0.1);
    const ceiling16 = analyzeAgentic(corpus, { spawn: "result-minus-duration", pageSize: 16, capacitiesTokens: [ws * 2] });
    expect(ratios.at(-1)!).toBeCloseTo(ceiling16.lru[0]!.hitRatio, 9);
    expect(ratios.at(-1)!).toBeCloseTo(ceiling16.ceilingHitRatio, 9);
  });
});
