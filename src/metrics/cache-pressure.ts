/**
 * Cache pressure: the working set (what the cache must hold for every expected hit) against the server's capacity,
 * and the requests whose observed hits fell below expected (eviction). Pure.
 */
import type { RequestRecord } from "../schema/record.ts";
import type { PointLine } from "../schema/lines.ts";

/** The server's prefix-cache capacity, tokens; null where it does not say. */
export interface CacheCapacity {
  /** The device (GPU) pool: SGLang /server_info max_total_num_tokens. */
  deviceTokens: number | null;
  /** The host tier (HiCache): hicache_ratio x the device pool when hicache_size is 0; null without one. */
  hostTokens: number | null;
}

/** The pressure fields of a pct or round line (their meaning: the schema's key table). */
export type CachePressure = Pick<
  PointLine,
  "working_set_tokens" | "cache_capacity_tokens" | "host_cache_capacity_tokens" | "working_set_fits" | "cache_shortfall_requests" | "eviction"
>;

/**
 * `lowerBoundOf(i)` is the least cached tokens record i may report without counting as a shortfall: the expected
 * value, or for a multi-turn turn whose history was re-tokenized, the part of it known exactly.
 */
export function cachePressure(
  records: readonly RequestRecord[],
  lowerBoundOf: (i: number) => number,
  workingSetTokens: number,
  capacity: CacheCapacity,
): CachePressure {
  let reported = 0;
  let short = 0;
  records.forEach((r, i) => {
    if (!r.ok || r.cachedTokens < 0) return;
    reported++;
    if (r.cachedTokens < lowerBoundOf(i)) short++;
  });
  return {
    working_set_tokens: workingSetTokens,
    cache_capacity_tokens: capacity.deviceTokens,
    host_cache_capacity_tokens: capacity.hostTokens,
    working_set_fits: capacity.deviceTokens === null ? null : workingSetTokens <= capacity.deviceTokens,
    cache_shortfall_requests: reported === 0 ? null : short,
    eviction: reported === 0 ? null : short > 0,
  };
}
