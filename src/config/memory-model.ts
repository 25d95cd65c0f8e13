/**
 * The client's peak memory, from a model fitted to the peak resident memory of the compiled binary measured on the
 * bench's shapes (bench/scenarios/memory-model.ts writes bench/results/memory-model.json, which checks every shape's
 * estimate within 1.5x of its measured peak; docs/performance.md renders it). Each term is what one unit of the run
 * holds at its peak, garbage not yet collected included: the runtime and tokenizer; each prefix token of the working
 * set (its ids, its serialized body, the warm's body); each token of a prompt in flight (ids, body, the request's
 * copy); each conversation (its streams and state), each turn (its plan and record, kept for its round and the cache
 * model), each token of a conversation's history at its last turn and each token of a turn's prompt; each worker
 * process beyond the first (a runtime of its own). A trace replay (Mooncake, agentic): its runtime, tokenizer and
 * readers; each request (its record, its schedule entry, the cache model's touches of it, its window's share); each
 * hash id of every request's chain (the parsed trace's array and line, the chains the cache model reads, its walks);
 * each token of the block store (a kept block's ids and digits); each token of the working set (the cache model's
 * trie of segments, the touches each keeps).
 */

const MIB = 1024 * 1024;
const KIB = 1024;

export const MEMORY_MODEL = {
  baseBytes: 110 * MIB,
  perPrefixTokenBytes: 44,
  perInFlightTokenBytes: 56,
  perConversationBytes: 16 * KIB,
  perTurnBytes: 7 * KIB,
  perHistoryTokenBytes: 70,
  perTurnTokenBytes: 1,
  perWorkerBytes: 100 * MIB,
  replayBaseBytes: 120 * MIB,
  perReplayRequestBytes: 5 * KIB,
  perChainIdBytes: 112,
  perKeptTokenBytes: 20,
  perWorkingSetTokenBytes: 14,
} as const;

/** A sweep's shape: its largest working set's prefix tokens, the tokens of the prompts it has in flight at once, its processes. */
export interface SweepShape {
  workingSetTokens: number;
  inFlightTokens: number;
  workers: number;
}

/** Every process builds the working set's prefixes; the prompts in flight are shared out among them. */
export function sweepMemoryBytes(s: SweepShape): number {
  const m = MEMORY_MODEL;
  return m.baseBytes + (s.workers - 1) * m.perWorkerBytes + s.workers * s.workingSetTokens * m.perPrefixTokenBytes + s.inFlightTokens * m.perInFlightTokenBytes;
}

/**
 * A multi-turn run's shape: its conversations, their turns, the tokens of their histories at the last turn (each
 * held once, as ids and serialized), the tokens of every turn's prompt (each turn's page hashes), its processes.
 */
export interface MultiturnShape {
  conversations: number;
  turns: number;
  historyTokens: number;
  turnPromptTokens: number;
  workers: number;
}

export function multiturnMemoryBytes(s: MultiturnShape): number {
  const m = MEMORY_MODEL;
  return (
    m.baseBytes +
    (s.workers - 1) * m.perWorkerBytes +
    s.conversations * m.perConversationBytes +
    s.turns * m.perTurnBytes +
    s.historyTokens * m.perHistoryTokenBytes +
    s.turnPromptTokens * m.perTurnTokenBytes
  );
}

/** The most worker processes the memory holds, each a runtime of its own, within `budgetBytes`. */
export const workersInMemory = (budgetBytes: number): number =>
  Math.max(1, Math.floor((budgetBytes - MEMORY_MODEL.baseBytes) / MEMORY_MODEL.perWorkerBytes) + 1);

/**
 * A trace replay's shape (src/replay/memory-shape.ts reads it from the parsed trace or corpus): the requests it
 * sends, the hash ids of their chains, the block store's tokens at its fullest, the working set's tokens.
 */
export interface ReplayShape {
  requests: number;
  chainIds: number;
  keptTokens: number;
  workingSetTokens: number;
}

export function replayMemoryBytes(s: ReplayShape): number {
  const m = MEMORY_MODEL;
  return (
    m.replayBaseBytes +
    s.requests * m.perReplayRequestBytes +
    s.chainIds * m.perChainIdBytes +
    s.keptTokens * m.perKeptTokenBytes +
    s.workingSetTokens * m.perWorkingSetTokenBytes
  );
}
