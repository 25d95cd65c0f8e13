/**
 * Proof of the cache state per pct: the flush emptied the cache (the prefix-only warm request found nothing
 * cached), the warm took (measured requests hit it), and every measured request reported exactly the expected
 * cached tokens (the prefix rounded down to the KV page size). Pure: records in, verdict out.
 */
import type { RequestRecord } from "../schema/record.ts";
import type { SweepRecord } from "../schema/lines.ts";
import type { VerifyCacheMode } from "../config/defaults.ts";

/** ok: every check passed; mismatch: some did not; unreported: the server reports no cached tokens; off: not checked. */
export type CacheStatus = SweepRecord["cache_check"];

export interface CacheCheck {
  status: CacheStatus;
  /** Successful measured requests that reported cached tokens. */
  checked: number;
  /** Of those, how many disagree with the expected value. */
  mismatched: number;
  /** The warm request reported 0 cached tokens after the flush; null when there was no warm or no report. */
  flushVerified: boolean | null;
  /** Measured requests reached the expected cache hit; null when nothing was expected (pct 0) or reported. */
  warmVerified: boolean | null;
  /** Expected / observed share of prompt tokens served from the cache. */
  expectedHitRatio: number;
  observedHitRatio: number | null;
  /** Distribution of the reported values: at most 10 values, most frequent first. */
  cachedTokensCounts: Array<[number, number]>;
  /** One line per problem, for the console and logs. */
  problems: string[];
  /** --verify-cache strict and the problems exceed --cache-tolerance. */
  failsStrict: boolean;
}

export interface CacheCheckInput {
  records: RequestRecord[];
  expectedCachedTokens: number;
  /**
   * The cached tokens a prompt may report, [low, high], where they cannot be known exactly (the cache model's range;
   * text prompts, whose tokens the server settles: see text-prompts.ts); exactly expectedCachedTokens for every prompt
   * when absent. Null: the request cannot be judged (no server is known for it), so it is no evidence either way.
   */
  expectedRange?: (index: number) => readonly [number, number] | null;
  /** Why the flush cannot have emptied the cache whatever the probes found (llama.cpp's host-RAM cache); null: none. */
  flushGap?: string | null;
  promptLen: number;
  /** Cached tokens the warm request reported; null when there was no warm request, -1 when not reported. */
  warmCachedTokens: number | null;
  /** Cached tokens a canary prompt, cached before the flush, found after it; null when not probed, -1 unknown. */
  flushProbeCachedTokens: number | null;
  mode: VerifyCacheMode;
  /** Fraction of checked requests that may disagree. */
  tolerance: number;
  /** False: the ranges assume no eviction, since the server states no capacity (the problem then says so). */
  capacityKnown?: boolean;
}

export function checkCache(i: CacheCheckInput): CacheCheck {
  const answered = i.records.filter((r) => r.ok && r.cachedTokens >= 0);
  const exact = [i.expectedCachedTokens, i.expectedCachedTokens] as const;
  const rangeOf = i.expectedRange ?? (() => exact);
  const unjudged = answered.filter((r) => rangeOf(r.index) === null).length;
  const reported = answered.filter((r) => rangeOf(r.index) !== null);
  const range = (index: number): readonly [number, number] => rangeOf(index)!;
  const outside = (r: RequestRecord): boolean => r.cachedTokens < range(r.index)[0] || r.cachedTokens > range(r.index)[1];
  const mismatched = reported.filter(outside);
  const counts = new Map<number, number>();
  let sum = 0;
  for (const r of answered) {
    counts.set(r.cachedTokens, (counts.get(r.cachedTokens) ?? 0) + 1);
    sum += r.cachedTokens;
  }
  const known = [i.flushProbeCachedTokens, i.warmCachedTokens].filter((v): v is number => v !== null && v >= 0);
  const gap = i.flushGap ?? null;
  const flushVerified = gap !== null ? false : known.length === 0 ? null : known.every((v) => v === 0);
  const warmVerified =
    i.expectedCachedTokens === 0 || reported.length === 0
      ? null
      : // A hit that proves the warm: some request found cached tokens where its range allows them (a range whose
        // low end is 0, as under cache pressure, is no proof on its own).
        reported.some((r) => r.cachedTokens > 0 && r.cachedTokens >= range(r.index)[0] && range(r.index)[1] > 0);

  const problems: string[] = [];
  if (gap !== null) problems.push(`the flush cannot empty the cache: ${gap}`);
  if ((i.flushProbeCachedTokens ?? 0) > 0) {
    problems.push(`the flush did not empty the cache: a probe of a sequence cached before it found ${i.flushProbeCachedTokens} tokens cached after it`);
  }
  if ((i.warmCachedTokens ?? 0) > 0) {
    problems.push(`the flush did not empty the cache: the prefix-only warm request found ${i.warmCachedTokens} tokens cached`);
  }
  if (warmVerified === false) problems.push("the warm did not take: no measured request hit the warmed prefix");
  if (mismatched.length > 0) {
    const seen = [...new Set(mismatched.map((r) => r.cachedTokens))].slice(0, 5).join(", ");
    const wanted = i.expectedRange ? "the range each prompt allows" : `the expected ${i.expectedCachedTokens}`;
    const assumed =
      i.capacityKnown === false && mismatched.some((r) => r.cachedTokens < range(r.index)[0])
        ? "; the server states no cache capacity, so the check assumed nothing was evicted (a --passport measures it)"
        : "";
    const short = mismatched.filter((r) => r.cachedTokens < range(r.index)[0]).length;
    const below = short > 0 ? `; ${short} found less cached than expected (eviction, or hits the engine dropped)` : "";
    problems.push(`${mismatched.length}/${reported.length} requests reported cached tokens other than ${wanted} (saw ${seen})${below}${assumed}`);
  }
  if (unjudged > 0) problems.push(`${unjudged} requests could not be judged: no server is known for them (a router that named none)`);
  const unreported = reported.length === 0 && i.records.some((r) => r.ok);
  if (unreported && unjudged === 0) problems.push("the server reported no cached tokens, so the cache cannot be verified");

  const tooMany = reported.length > 0 && mismatched.length / reported.length > i.tolerance;
  // A warm that did not take shows up as mismatches too, so --cache-tolerance governs it as well.
  const status: CacheStatus = i.mode === "off" ? "off" : unreported ? "unreported" : tooMany || flushVerified === false ? "mismatch" : "ok";
  return {
    status,
    checked: reported.length,
    mismatched: mismatched.length,
    flushVerified,
    warmVerified,
    expectedHitRatio: i.promptLen > 0 ? i.expectedCachedTokens / i.promptLen : 0,
    observedHitRatio: answered.length > 0 && i.promptLen > 0 ? sum / answered.length / i.promptLen : null,
    cachedTokensCounts: [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, 10),
    problems: i.mode === "off" ? [] : problems,
    failsStrict: i.mode === "strict" && (status === "mismatch" || status === "unreported"),
  };
}
