/**
 * Hash ids to token ids, so that a trace replays token-exact: hash id h names one fixed block of `blockSize` ids,
 * identical in every request and every run with the same --seed, and a prompt is its blocks in order with the last
 * one cut so the prompt has exactly input_length ids. Sending token ids (not text) keeps block boundaries where the
 * trace puts them: no re-tokenization moves them.
 *
 * A block's first id is fixed by h alone, the rest are drawn from Random((|seed| << 64) + h), Python-compatible.
 * Why the first id is fixed: two different blocks at the same position after a shared prefix must not share a
 * leading token, or the server would cache one token more than the trace shares. The first id of block h is the
 * population's (h mod (V - 1))-th id, skipping one reserved id (the flush proof's canary starts with it, and stays
 * cached), V the population size. So for h < V - 1 (V is ~32k-150k for real tokenizers) no two blocks share a first
 * id and no block starts like the canary; for larger ids two blocks share their first id when their ids differ by a
 * multiple of V - 1 (one token more cached at page size 1; a whole page of P ids with probability V^-(P-1)). Two
 * different hash ids giving identical blocks has probability V^-(blockSize-1): never, in practice.
 *
 * Blocks are built just in time and the most recent are kept (a bounded LRU) with their digits as they go on the
 * wire, so memory stays O(in flight) whatever the trace's length while a system prompt shared by every request is
 * drawn and serialized once; a prompt's body is views of its blocks' digits, nothing copied.
 */
import { serializeIds } from "../workload/prompts.ts";
import { PyRandom } from "../workload/rng.ts";
import type { TraceRequest } from "../workload/trace.ts";

/** Blocks kept for reuse: 4096 x 512 ids x 4 bytes = 8 MiB at the default block size. */
export const KEPT_BLOCKS = 4096;

/** The generator's seed of hash id h under --seed: distinct for every (|seed|, h) with h < 2^64. */
export const blockSeed = (seed: bigint, hashId: number): bigint => ((seed < 0n ? -seed : seed) << 64n) + BigInt(hashId);

interface Block {
  ids: Uint32Array;
  /** The ids as ASCII digits joined by ",". */
  digits: Uint8Array;
}

const COMMA = 44;

export class BlockSource {
  private readonly kept = new Map<number, Block>();

  constructor(
    private readonly population: Uint32Array,
    private readonly seed: bigint,
    readonly blockSize: number,
    /** A population index no block starts with (the canary's first id); null: none. */
    private readonly reserved: number | null = null,
    private readonly keep = KEPT_BLOCKS,
  ) {
    if (population.length < 2) throw new Error("BlockSource: a population of at least two ids is needed");
  }

  /** The population index of block h's first id. */
  private firstIndex(hashId: number): number {
    if (this.reserved === null) return hashId % this.population.length;
    const i = hashId % (this.population.length - 1);
    return i >= this.reserved ? i + 1 : i;
  }

  /** Hash id h's block: blockSize ids (shared: callers must not write to it). */
  block(hashId: number): Uint32Array {
    return this.entry(hashId).ids;
  }

  /** Draws hash id h's block now unless kept (refreshed if so): the prompt that needs it then only joins views. */
  prepare(hashId: number): void {
    this.entry(hashId);
  }

  private entry(hashId: number): Block {
    const hit = this.kept.get(hashId);
    if (hit !== undefined) {
      // Refreshed: a Map iterates in insertion order, so the first entry is the least recently used.
      this.kept.delete(hashId);
      this.kept.set(hashId, hit);
      return hit;
    }
    const ids = new Uint32Array(this.blockSize);
    ids[0] = this.population[this.firstIndex(hashId)]!;
    new PyRandom(blockSeed(this.seed, hashId)).choicesInto(this.population, ids, 1, this.blockSize - 1);
    const block = { ids, digits: serializeIds(ids) };
    this.kept.set(hashId, block);
    if (this.kept.size > this.keep) this.kept.delete(this.kept.keys().next().value!);
    return block;
  }

  /** Forgets every kept block (a replay done with them: its peak memory is then the cache model's, not theirs too). */
  release(): void {
    this.kept.clear();
  }

  /** The request's prompt as digit pieces to be joined by ",": its blocks' digits, the last cut (views, not copies). */
  promptDigits(req: Pick<TraceRequest, "inputLength" | "hashIds">): Uint8Array[] {
    return req.hashIds.map((h, j) => {
      const digits = this.entry(h).digits;
      const take = Math.min(this.blockSize, req.inputLength - j * this.blockSize);
      return take === this.blockSize ? digits : digits.subarray(0, endOfId(digits, take));
    });
  }

  /** The request's prompt: its blocks in order, the last cut so it has exactly inputLength ids. */
  prompt(req: Pick<TraceRequest, "inputLength" | "hashIds">): Uint32Array {
    const out = new Uint32Array(req.inputLength);
    for (let j = 0; j < req.hashIds.length; j++) {
      const at = j * this.blockSize;
      const take = Math.min(this.blockSize, req.inputLength - at);
      out.set(this.block(req.hashIds[j]!).subarray(0, take), at);
    }
    return out;
  }
}

/** The byte offset where the digits of the first `count` ids end (just before the count-th comma). */
function endOfId(digits: Uint8Array, count: number): number {
  let seen = 0;
  for (let i = 0; i < digits.length; i++) if (digits[i] === COMMA && ++seen === count) return i;
  return digits.length;
}
