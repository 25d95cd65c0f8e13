/** The numbers of one pct, fixed before anything is sent: the script's prefix/suffix split and what the cache should hold. */
import { inFlightLimit, type RunOptions } from "../options.ts";

export interface PctPlan {
  pct: number;
  /** total_tokens*pct//100, as the script. */
  prefixLen: number;
  suffixLen: number;
  /** Every measured prompt's length, tokens. */
  promptLen: number;
  numPrompts: number;
  /** The prompt indices this process sends: all of them, or its shard's share. */
  indices: number[];
  /** Requests in flight at once in this process (--max-concurrency, or every prompt when it is 0; a shard's share). */
  inFlight: number;
  /** Cached tokens every measured request should report: the prefix in whole pages. */
  expectedCachedTokens: number;
  /** Distinct prefixes in rotation (--working-set). */
  workingSet: number;
  /** workingSet x prefixLen: what the cache must hold for every expected hit. */
  workingSetTokens: number;
}

/** Cached tokens a measured request should report: the prefix in whole pages, at most promptLen-1 (SGLang). */
export function expectedCached(prefixLen: number, promptLen: number, pageSize: number): number {
  const cachable = Math.min(prefixLen, promptLen - 1);
  return Math.max(0, Math.floor(cachable / pageSize) * pageSize);
}

/** A process's part of a sharded run: shard `rank` of `size` sends prompts rank, rank+size, rank+2·size, ... */
export interface ShardShare {
  rank: number;
  size: number;
}

/** Shard `rank`'s share of `total` slots (prompts or in-flight requests): the remainder goes to the first ranks. */
export const shareOf = (total: number, s: ShardShare): number => Math.floor(total / s.size) + (s.rank < total % s.size ? 1 : 0);

export function planPct(pct: number, opts: RunOptions, pageSize: number, share: ShardShare | null = null, workingSet = 1): PctPlan {
  const prefixLen = Math.floor((opts.totalTokens * pct) / 100);
  const indices: number[] = [];
  for (let i = share?.rank ?? 0; i < opts.numPrompts; i += share?.size ?? 1) indices.push(i);
  return {
    workingSet,
    workingSetTokens: workingSet * prefixLen,
    pct,
    prefixLen,
    suffixLen: opts.totalTokens - prefixLen,
    promptLen: opts.totalTokens,
    numPrompts: opts.numPrompts,
    indices,
    inFlight: share === null ? inFlightLimit(opts) : Math.max(1, shareOf(inFlightLimit(opts), share)),
    expectedCachedTokens: expectedCached(prefixLen, opts.totalTokens, pageSize),
  };
}
