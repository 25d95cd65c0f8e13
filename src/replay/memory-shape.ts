/**
 * A replay's shape for the memory model (config/memory-model.ts replayMemoryBytes), from the parsed trace or corpus
 * alone, before anything is sent: the requests it will send, the hash ids of their chains (each held by the parsed
 * trace, by the chains the cache model reads and by its walks), the block store's tokens at its fullest (the blocks
 * kept drawn: at most the store's size, at most the working set) and the working set's tokens (every block once: the
 * cache model's trie).
 */
import type { ReplayShape } from "../config/memory-model.ts";
import type { AgenticTrace } from "../workload/agentic/session-tree.ts";
import { callsOf } from "./agentic-prefetch.ts";
import { agenticStoreTokens } from "./agentic-store.ts";
import { KEPT_BLOCKS } from "./blocks.ts";
import type { Trace } from "../workload/trace.ts";

/** A Mooncake trace's slice: every request once, its chain as the trace gives it. */
export function mooncakeReplayShape(trace: Pick<Trace, "requests" | "blockSize">): ReplayShape {
  const distinct = new Set<number>();
  let chainIds = 0;
  for (const r of trace.requests) {
    chainIds += r.hashIds.length;
    for (const h of r.hashIds) distinct.add(h);
  }
  const workingSetTokens = distinct.size * trace.blockSize;
  return {
    requests: trace.requests.length,
    chainIds,
    // The Mooncake replay keeps BlockSource's default store.
    keptTokens: Math.min(workingSetTokens, KEPT_BLOCKS * trace.blockSize),
    workingSetTokens,
  };
}

/**
 * An agentic corpus in `lanes` lanes (--sessions; null: one per trace): max(traces, lanes) session trees, tree i
 * the corpus's trace i mod its length, each in a namespace of its own (its blocks its own). A call's chain is its
 * full blocks and, where its prompt ends inside one, a tail drawn for it alone (prompt-chain.ts). The block store:
 * agentic-store.ts's, as run-agentic.ts keeps it.
 */
export function agenticReplayShape(corpus: readonly AgenticTrace[], lanes: number | null): ReplayShape {
  const perTrace = corpus.map((t) => {
    const distinct = new Set<number>();
    let chainIds = 0;
    let tailTokens = 0;
    let longest = 0;
    const calls = callsOf(t.steps);
    for (const c of calls) {
      for (const h of c.hashIds) distinct.add(h);
      const tail = c.inputLength - c.hashIds.length * t.blockSize;
      chainIds += c.hashIds.length + (tail > 0 ? 1 : 0);
      tailTokens += Math.max(0, tail);
      longest = Math.max(longest, c.inputLength);
    }
    return { requests: calls.length, chainIds, workingSetTokens: distinct.size * t.blockSize + tailTokens, longest };
  });
  const inLanes = lanes ?? corpus.length;
  const trees = Math.max(corpus.length, inLanes);
  const shape = { requests: 0, chainIds: 0, keptTokens: 0, workingSetTokens: 0 };
  for (let i = 0; i < trees; i++) {
    const t = perTrace[i % corpus.length]!;
    shape.requests += t.requests;
    shape.chainIds += t.chainIds;
    shape.workingSetTokens += t.workingSetTokens;
  }
  const longest = perTrace.reduce((a, t) => Math.max(a, t.longest), 0);
  const storeTokens = agenticStoreTokens(inLanes, longest);
  shape.keptTokens = Math.min(shape.workingSetTokens, storeTokens);
  return shape;
}
