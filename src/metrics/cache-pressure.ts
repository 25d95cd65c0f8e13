/**
 * Cache pressure: the working set (what the cache must hold for every expected hit) against the server's capacity,
 * and the requests whose observed hits fell below expected (eviction). With the one cache model (cache-model.ts)
 * both come from it: the capacity it evicts at (device pool plus host tier, `modelCapacityOf`) and, per request, what
 * an infinite cache would certainly have given against what it reported. Pure.
 */
import type { RequestRecord } from "../schema/record.ts";
import type { PointLine } from "../schema/lines.ts";
import type { Expectation } from "./cache-model.ts";

/** The server's prefix-cache capacity, tokens; null where it does not say. */
export interface CacheCapacity {
  /** The device (GPU) pool: SGLang /server_info max_total_num_tokens. */
  deviceTokens: number | null;
  /** The host tier (HiCache): hicache_ratio x the device pool when hicache_size is 0; null without one. */
  hostTokens: number | null;
}

/** What the one cache model says of the point: the capacity it evicts at and each request's range. */
export interface ModelPressure {
  /** `modelCapacityOf(info)`: device plus host tier; null: unknown (no eviction is modelled). */
  capacityTokens: number | null;
  /** Record `r` (at position `i` of the records)'s expectation on the server that served it; undefined: not modelled (unjudged). */
  expectationOf: (r: RequestRecord, i: number) => Expectation | undefined;
}

/** The pressure fields of a pct or round line (their meaning: the schema's key table). */
export type CachePressure = Pick<
  PointLine,
  "working_set_tokens" | "cache_capacity_tokens" | "host_cache_capacity_tokens" | "working_set_fits" | "cache_shortfall_requests" | "eviction"
>;

/**
 * `lowerBoundOf(i)` is the least cached tokens record i may report without counting as a shortfall: the expected
 * value, or for a multi-turn turn whose history was re-tokenized, the part of it known exactly. With `model`, the
 * model decides instead: a shortfall is a report below what an infinite cache certainly gives, eviction is such a
 * report that the model's range explains (the capacity took it; below the range the engine dropped hits, which is
 * the cache check's mismatch), and the working set fits where it is at most the capacity the model evicts at.
 */
export function cachePressure(
  records: readonly RequestRecord[],
  lowerBoundOf: (i: number) => number,
  workingSetTokens: number,
  capacity: CacheCapacity,
  model?: ModelPressure,
): CachePressure {
  let reported = 0;
  let short = 0;
  let evicted = 0;
  records.forEach((r, i) => {
    if (!r.ok || r.cachedTokens < 0) return;
    if (model === undefined) {
      reported++;
      if (r.cachedTokens < lowerBoundOf(i)) short++;
      return;
    }
    const x = model.expectationOf(r, i);
    if (x === undefined) return;
    reported++;
    // Fewer than an infinite cache certainly gives: a shortfall; eviction where the model's range explains it (the
    // report clamped into the range is still short) - below the range, the engine dropped hits (the cache check's).
    if (r.cachedTokens < x.infiniteGuaranteed) short++;
    if (Math.max(x.guaranteed, Math.min(r.cachedTokens, x.possible)) < x.infiniteGuaranteed) evicted++;
  });
  const fitsIn = model === undefined ? capacity.deviceTokens : model.capacityTokens;
  return {
    working_set_tokens: workingSetTokens,
    cache_capacity_tokens: capacity.deviceTokens,
    host_cache_capacity_tokens: capacity.hostTokens,
    working_set_fits: fitsIn === null ? null : workingSetTokens <= fitsIn,
    cache_shortfall_requests: reported === 0 ? null : short,
    eviction: reported === 0 ? null : model === undefined ? short > 0 : evicted > 0,
  };
}
