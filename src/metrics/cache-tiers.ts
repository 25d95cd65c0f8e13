/**
 * Where the cache hits came from: tokens per cache tier (SGLang HiCache's device / host / storage, from each
 * request's cached_tokens_details) and TTFT split by the tier that served each request's prefix. Pure: records in,
 * the two JSON objects of a pct or round line out (null when the server reports no breakdown).
 */
import type { RequestRecord } from "../schema/record.ts";
import type { SweepRecord } from "../schema/lines.ts";
import type { CachedTokensByTier } from "../schema/nested.ts";
import { npMean, npMedian, npPercentile } from "./stats.ts";

/** The deepest tier a request's prefix came from; "none" when nothing was cached. */
export type ServingTier = "device" | "host" | "storage" | "none";

const SERVING_TIERS: readonly ServingTier[] = ["device", "host", "storage", "none"];

// The line's shapes are declared once, in the schema's key table (cached_tokens_by_tier, ttft_by_tier).
/** Cached prompt tokens per tier, summed over the successful requests that reported the breakdown. */
/** Per serving tier; a tier that served no request is null. */
type TtftByTier = NonNullable<SweepRecord["ttft_by_tier"]>;

export interface TierStats {
  cachedTokensByTier: CachedTokensByTier | null;
  ttftByTier: TtftByTier | null;
}

/**
 * The tier that served a request: a prefix that needed the slowest tier for any part waited for it, so storage
 * beats host beats device. null when the server did not report the breakdown.
 */
export function servingTier(r: Pick<RequestRecord, "cachedTokens" | "cachedDeviceTokens" | "cachedHostTokens" | "cachedStorageTokens">): ServingTier | null {
  if (r.cachedDeviceTokens < 0) return null;
  if (r.cachedStorageTokens > 0) return "storage";
  if (r.cachedHostTokens > 0) return "host";
  if (r.cachedDeviceTokens > 0) return "device";
  return "none";
}

export function tierStats(records: readonly RequestRecord[]): TierStats {
  const totals: CachedTokensByTier = { device: 0, host: 0, storage: 0 };
  const ttfts: Record<ServingTier, number[]> = { device: [], host: [], storage: [], none: [] };
  const cached: Record<ServingTier, number[]> = { device: [], host: [], storage: [], none: [] };
  let reported = 0;
  for (const r of records) {
    if (!r.ok) continue;
    const tier = servingTier(r);
    if (tier === null) continue;
    reported++;
    totals.device += r.cachedDeviceTokens;
    totals.host += r.cachedHostTokens;
    totals.storage += r.cachedStorageTokens;
    ttfts[tier].push(r.ttftMs);
    cached[tier].push(Math.max(0, r.cachedTokens));
  }
  if (reported === 0) return { cachedTokensByTier: null, ttftByTier: null };
  const byTier = {} as TtftByTier;
  for (const tier of SERVING_TIERS) {
    const xs = ttfts[tier];
    byTier[tier] =
      xs.length === 0
        ? null
        : {
            requests: xs.length,
            mean_ttft_ms: npMean(xs),
            median_ttft_ms: npMedian(xs),
            p99_ttft_ms: npPercentile(xs, 99),
            mean_cached_tokens: npMean(cached[tier]),
          };
  }
  return { cachedTokensByTier: totals, ttftByTier: byTier };
}
