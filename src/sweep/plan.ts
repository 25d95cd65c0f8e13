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
  /** Requests in flight at once (--max-concurrency, or every prompt when it is 0). */
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

export function planPct(pct: number, opts: RunOptions, pageSize: number, workingSet = 1): PctPlan {
  const prefixLen = Math.floor((opts.totalTokens * pct) / 100);
  return {
    workingSet,
    workingSetTokens: workingSet * prefixLen,
    pct,
    prefixLen,
    suffixLen: opts.totalTokens - prefixLen,
    promptLen: opts.totalTokens,
    numPrompts: opts.numPrompts,
    inFlight: inFlightLimit(opts),
    expectedCachedTokens: expectedCached(prefixLen, opts.totalTokens, pageSize),
  };
}
