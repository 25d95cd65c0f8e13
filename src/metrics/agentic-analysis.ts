/**
 * `replay --analyze` for agentic traces, without a server: each session's infinite-cache ceiling, an LRU hit curve
 * over cache capacities for the corpus, and the subagents' shape (fan-out, depth, concurrency). The sessions are
 * read as recorded: every session starts at 0, each call is sent at its recorded time and ends at its recorded end
 * (`t + api_time`; spawns and joins as the spawn rule reads them), each session in its own namespace (they never
 * share a block). A block counts as a hit only once the call that brought it has ended, as AIPerf's theoretical
 * prefix-cache hit counts it; the hit ratios come from the one cache model (cache-model.ts) on those times.
 */
import { type SpawnRule, planTree } from "../workload/agentic/session-plan.ts";
import type { AgenticTrace } from "../workload/agentic/session-tree.ts";
import { type CacheSequence, type ModelRequest, expectCache } from "./cache-model.ts";

interface SessionShape {
  traceId: string;
  requests: number;
  subagents: number;
  /** Deepest nesting of subagents (0: none). */
  depth: number;
  /** Most subagents spawned by one chain. */
  fanOut: number;
  /** Most subagents running at once, as recorded (spawn to recorded end). */
  concurrency: number;
  inputTokens: number;
  /** Cached / prompt tokens with an infinite cache, this session alone. */
  ceilingHitRatio: number;
}

export interface AgenticAnalysis {
  sessions: SessionShape[];
  /** Token-weighted over the corpus. */
  ceilingHitRatio: number;
  /** Distinct prompt tokens of the corpus: what an infinite cache ends up holding. */
  workingSetTokens: number;
  /** Hit ratio of an LRU cache of each capacity, the sessions running together as recorded. */
  lru: { capacityTokens: number; hitRatio: number }[];
}

export function analyzeAgentic(
  corpus: readonly AgenticTrace[],
  o: { spawn: SpawnRule; pageSize: number; capacitiesTokens: readonly number[] },
): AgenticAnalysis {
  const requests: ModelRequest[] = [];
  const sessionOf: number[] = [];
  const sessions: Omit<SessionShape, "ceilingHitRatio">[] = [];
  // Compact ids per (session, hash id), tails fresh: the model's trie keys stay small numbers.
  let nextId = 0;
  for (const [s, trace] of corpus.entries()) {
    const plan = planTree(trace, o.spawn, "none");
    const ids = new Map<number, number>();
    for (const pc of plan.calls) {
      const c = pc.call;
      const hashIds = c.hashIds.map((h) => {
        let id = ids.get(h);
        if (id === undefined) {
          id = nextId++;
          ids.set(h, id);
        }
        return id;
      });
      if (hashIds.length * trace.blockSize < c.inputLength) hashIds.push(nextId++);
      const ends = hashIds.map((_, j) => Math.min((j + 1) * trace.blockSize, c.inputLength));
      const prompt: CacheSequence = { hashIds, ends, length: c.inputLength };
      // Recorded times in ms; an end no later than the send is moved just past it (the model needs send < end).
      const startMs = pc.startS * 1000;
      const endMs = Math.max(pc.endS * 1000, startMs + 0.002);
      requests.push({ key: requests.length, prompt, startMs, firstTokenMs: startMs + 0.001, endMs, ok: true, generated: c.outputLength });
      sessionOf.push(s);
    }
    const children = plan.chains.map(() => 0);
    const depth = plan.chains.map(() => 0);
    for (const [i, ch] of plan.chains.entries()) {
      if (ch.parent < 0) continue;
      children[ch.parent]!++;
      depth[i] = depth[ch.parent]! + 1;
    }
    sessions.push({
      traceId: trace.id,
      requests: plan.calls.length,
      subagents: plan.chains.length - 1,
      depth: Math.max(...depth),
      fanOut: Math.max(...children),
      concurrency: peakOverlap(plan.chains.slice(1).map((ch) => [ch.spawnS, ch.endS] as const)),
      inputTokens: plan.calls.reduce((a, pc) => a + pc.call.inputLength, 0),
    });
  }
  const model = (capacityTokens: number | null) =>
    expectCache(requests, [], {
      pageSize: o.pageSize,
      blockSize: 1,
      capacityTokens,
      behaviour: { insertAt: "finish", answersCached: false, inflightLocked: true },
      sharpPossible: false,
    });
  const infinite = model(null);
  const ceilingHits = sessions.map(() => 0);
  for (const r of requests) ceilingHits[sessionOf[r.key]!]! += infinite.get(r.key)!.infiniteGuaranteed;
  const totalInput = sessions.reduce((a, s) => a + s.inputTokens, 0);
  const lru = o.capacitiesTokens.map((capacityTokens) => {
    const got = model(capacityTokens);
    const hits = requests.reduce((a, r) => a + got.get(r.key)!.guaranteed, 0);
    return { capacityTokens, hitRatio: totalInput > 0 ? hits / totalInput : 0 };
  });
  return {
    sessions: sessions.map((s, i) => ({ ...s, ceilingHitRatio: s.inputTokens > 0 ? ceilingHits[i]! / s.inputTokens : 0 })),
    ceilingHitRatio: totalInput > 0 ? ceilingHits.reduce((a, b) => a + b, 0) / totalInput : 0,
    workingSetTokens: workingSet(requests),
    lru,
  };
}

/** Most intervals [from, to) open at once. */
function peakOverlap(spans: readonly (readonly [number, number])[]): number {
  const events = spans.flatMap(([a, b]) => [[a, 1] as const, [Math.max(a, b), -1] as const]).sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  let open = 0;
  let peak = 0;
  for (const [, d] of events) {
    open += d;
    peak = Math.max(peak, open);
  }
  return peak;
}

/** Distinct prompt tokens: each prefix node (a block after one exact chain of blocks) at its longest use. */
function workingSet(requests: readonly ModelRequest[]): number {
  const child = new Map<string, number>();
  const longest: number[] = [0];
  for (const r of requests) {
    let node = 0;
    let from = 0;
    r.prompt.hashIds.forEach((id, j) => {
      const key = `${node}:${id}`;
      let next = child.get(key);
      if (next === undefined) {
        next = longest.length;
        child.set(key, next);
        longest.push(0);
      }
      const end = r.prompt.ends![j]!;
      longest[next] = Math.max(longest[next]!, end - from);
      node = next;
      from = end;
    });
  }
  return longest.reduce((a, b) => a + b, 0);
}
