/**
 * `replay --analyze`: what a trace asks of a cache, without a server. Requests are taken one after another in trace
 * order, each finished before the next (the most an infinite cache could give, and the reference the replay's own
 * expectations are bounded by); per window of trace time, the distinct prompt tokens touched (the working set) and
 * the hit ratio an LRU cache of `cacheTokens` would keep, so a user can size a cache before running the trace.
 */
import { npMean, npPercentile } from "./stats.ts";
import { BlockTrie } from "./block-trie.ts";
import { expectCache, type ModelRequest } from "./cache-model.ts";
import type { Trace, TraceRequest } from "../workload/trace.ts";

export interface Distribution {
  min: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export interface AnalyzedWindow {
  /** Window index: trace seconds [window * windowS, (window + 1) * windowS). */
  window: number;
  requests: number;
  inputTokens: number;
  /** Distinct prompt tokens the window's requests touch. */
  workingSetTokens: number;
  infiniteHitRatio: number;
  /** With an LRU cache of cacheTokens (null without --cache-tokens). */
  lruHitRatio: number | null;
}

export interface TraceAnalysis {
  requests: number;
  durationS: number;
  inputLength: Distribution;
  outputLength: Distribution;
  /** Cached prompt tokens / prompt tokens under an infinite cache. */
  infiniteHitRatio: number;
  lruHitRatio: number | null;
  /** Distinct prompt tokens of the whole slice: what an infinite cache ends up holding. */
  workingSetTokens: number;
  cacheTokens: number | null;
  windows: AnalyzedWindow[];
}

function distribution(values: number[]): Distribution {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    min: sorted[0]!,
    mean: npMean(sorted),
    p50: npPercentile(sorted, 50),
    p90: npPercentile(sorted, 90),
    p99: npPercentile(sorted, 99),
    max: sorted.at(-1)!,
  };
}

/** Distinct prompt tokens of a set of requests: every node of the trie counted once, at its longest use. */
function workingSet(requests: readonly TraceRequest[], blockSize: number): number {
  const trie = new BlockTrie(blockSize);
  const longest = new Map<number, number>();
  for (const r of requests) {
    for (const [j, node] of trie.path(r).entries()) longest.set(node, Math.max(longest.get(node) ?? 0, trie.blockLen(r.inputLength, j)));
  }
  let tokens = 0;
  for (const len of longest.values()) tokens += len;
  return tokens;
}

export function analyzeTrace(trace: Trace, o: { pageSize: number; cacheTokens: number | null; windowS: number }): TraceAnalysis {
  const rs = trace.requests;
  // The trace as the cache model reads it: each request on its own, in trace order (no server: nothing overlaps), on
  // a server that caches prompts at their prefill and answers with them.
  const asSent: ModelRequest[] = rs.map((r, i) => ({
    key: i,
    prompt: { hashIds: r.hashIds, length: r.inputLength },
    startMs: 3 * i,
    firstTokenMs: 3 * i + 1,
    endMs: 3 * i + 2,
    ok: true,
    generated: r.outputLength,
  }));
  const model = (capacityTokens: number | null) =>
    expectCache(asSent, [], {
      pageSize: o.pageSize,
      blockSize: trace.blockSize,
      capacityTokens,
      behaviour: { insertAt: "prefill", answersCached: true, inflightLocked: true },
    });
  const infinite = model(null);
  const lru = o.cacheTokens === null ? null : model(o.cacheTokens);
  const hits = rs.map((_, i) => ({ inf: infinite.get(i)!.infiniteGuaranteed, lru: lru === null ? null : lru.get(i)!.guaranteed }));
  const ratio = (idx: number[], pick: (i: number) => number): number => {
    const input = idx.reduce((a, i) => a + rs[i]!.inputLength, 0);
    return input > 0 ? idx.reduce((a, i) => a + pick(i), 0) / input : 0;
  };
  const byWindow = new Map<number, number[]>();
  rs.forEach((r, i) => {
    const w = Math.floor(r.timestampMs / 1000 / o.windowS);
    const idx = byWindow.get(w);
    if (idx === undefined) byWindow.set(w, [i]);
    else idx.push(i);
  });
  const all = rs.map((_, i) => i);
  const windows = [...byWindow.entries()].map(([window, idx]) => ({
    window,
    requests: idx.length,
    inputTokens: idx.reduce((a, i) => a + rs[i]!.inputLength, 0),
    workingSetTokens: workingSet(
      idx.map((i) => rs[i]!),
      trace.blockSize,
    ),
    infiniteHitRatio: ratio(idx, (i) => hits[i]!.inf),
    lruHitRatio: lru === null ? null : ratio(idx, (i) => hits[i]!.lru!),
  }));
  return {
    requests: rs.length,
    durationS: (rs.at(-1)!.timestampMs - rs[0]!.timestampMs) / 1000,
    inputLength: distribution(rs.map((r) => r.inputLength)),
    outputLength: distribution(rs.map((r) => r.outputLength)),
    infiniteHitRatio: ratio(all, (i) => hits[i]!.inf),
    lruHitRatio: lru === null ? null : ratio(all, (i) => hits[i]!.lru!),
    workingSetTokens: workingSet(rs, trace.blockSize),
    cacheTokens: o.cacheTokens,
    windows,
  };
}
