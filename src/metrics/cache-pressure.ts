/**
 * Cache pressure: the working set (what the cache must hold for every expected hit) against the server's capacity,
 * and the requests whose observed hits fell below expected (eviction). Pure.
 */
import type { RequestRecord } from "../schema/record.ts";

/** The server's prefix-cache capacity, tokens; null where it does not say. */
export interface CacheCapacity {
  /** The device (GPU) pool: SGLang /server_info max_total_num_tokens. */
  deviceTokens: number | null;
  /** The host tier (HiCache): hicache_ratio x the device pool when hicache_size is 0; null without one. */
  hostTokens: number | null;
}

/** The pressure fields of a pct or round line. */
export interface CachePressure {
  working_set_tokens: number;
  cache_capacity_tokens: number | null;
  host_cache_capacity_tokens: number | null;
  /** working_set_tokens <= the device capacity; null when the capacity is unknown. */
  working_set_fits: boolean | null;
  /** Successful requests that reported fewer cached tokens than expected; null when none reported any. */
  cache_shortfall_requests: number | null;
  /** Some request's observed hit fell below expected; null when none reported cached tokens. */
  eviction: boolean | null;
}

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
