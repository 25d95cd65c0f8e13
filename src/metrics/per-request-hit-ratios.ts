/**
 * A point's hit ratios where each request has its own expectation (a replay's: every prompt differs), over the
 * prompt tokens of the requests that reported cached tokens: expected, each judged request's least expected count
 * (its range's low end); observed, what those requests reported. A request with no range (no server is known for
 * it) adds its prompt to the denominator only. Pure.
 */
import type { RequestRecord } from "../schema/record.ts";

export interface HitRatios {
  expected: number;
  /** Null: no request reported cached tokens. */
  observed: number | null;
}

export function perRequestHitRatios(records: readonly RequestRecord[], rangeOf: (index: number) => readonly [number, number] | null): HitRatios {
  let reportedInput = 0;
  let expected = 0;
  let observed = 0;
  for (const r of records) {
    if (!r.ok || r.cachedTokens < 0) continue;
    reportedInput += r.promptLen;
    const range = rangeOf(r.index);
    if (range === null) continue;
    expected += range[0];
    observed += r.cachedTokens;
  }
  return { expected: reportedInput > 0 ? expected / reportedInput : 0, observed: reportedInput > 0 ? observed / reportedInput : null };
}
