/**
 * A call's prompt as the replay's block source (src/replay/blocks.ts BlockSource) builds it token-exact: a chain of
 * ids, one fixed block each, the last cut to the call's length. The trace's hash ids are folded into a namespace so
 * that traces with local ids, and a trace replayed twice in one run (clones), never share a block; the tail
 * (`in` mod block size, where the trace names full blocks only) is one more id of its own, so it is drawn per request.
 *
 * Layout of an id (below 2^53, so BlockSource's seed (|seed| << 64) + id stays distinct): bit 52 marks a tail,
 * bits 32..51 the namespace, bits 0..31 the trace's hash id (or the tail's request ordinal). BlockSource fixes a
 * block's first token by id mod (V - 1): two ids of one namespace differing by less than V - 1 still never share it,
 * as in the Mooncake replay; a tail and a block at the same place share it with probability about 1/V (one token
 * more cached at page size 1, nothing at larger pages).
 */
import type { AgenticTrace } from "./session-tree.ts";

const SPAN = 2 ** 32;
const TAIL = 2 ** 52;
/** Namespaces available: 2^20 (half for local traces' instances, half for global corpora's clones). */
const NAMESPACES = 2 ** 20;

/**
 * The namespace of one replay instance of a trace: local ids get one per instance (clones included), global ids one
 * per pass over the corpus (`clone`: 0 for the first), shared by every trace of that pass as the scope says.
 */
export function traceNamespace(trace: Pick<AgenticTrace, "hashIdScope">, instance: number, clone: number): number {
  const ns = trace.hashIdScope === "local" ? 2 * instance + 1 : 2 * clone;
  if (ns >= NAMESPACES) throw new Error(`prompt chain: namespace ${ns} beyond ${NAMESPACES} (too many replayed sessions)`);
  return ns;
}

/**
 * The chain BlockSource turns into the call's prompt: `inputLength` ids in ceil(inputLength / blockSize) blocks.
 * `ordinal` is the call's place in its tree instance (unique there): it keys the tail.
 */
export function promptChain(
  call: { inputLength: number; hashIds: readonly number[] },
  blockSize: number,
  namespace: number,
  ordinal: number,
): { inputLength: number; hashIds: number[] } {
  const base = namespace * SPAN;
  const ids = call.hashIds.map((h) => base + h);
  if (ids.length * blockSize < call.inputLength) ids.push(TAIL + base + ordinal);
  return { inputLength: call.inputLength, hashIds: ids };
}
