/**
 * The numbers every producer's plan needs, fixed before anything is sent: what a request should find cached, and a
 * process's share of a sharded run.
 */

/** Cached tokens a request should report: the cachable part in whole pages, at most promptLen-1 (SGLang). */
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
