/**
 * Each replayed request's observed cached tokens judged against its predicted range (the one cache model,
 * metrics/cache-model.ts, on the replica that served it), and the totals of a window or of the whole replay. Pure.
 */
import type { RequestRecord } from "../schema/record.ts";
import type { Expectation } from "./cache-model.ts";

/** A request's predicted cached tokens, as the replay reports them. */
export interface Prediction {
  /** Cached tokens an infinite cache would certainly have given (what was inserted before it was sent). */
  infinite: number;
  /** The most an infinite cache could have given (inserted, or possibly inserted by a request still in prefill, before
   * it was sent): the request's ceiling, which no server beats. */
  ceiling: number;
  /** The least to expect (the model's guaranteed). */
  lower: number;
  /** The most to expect (the model's possible). */
  upper: number;
  /** infinite - lower: hits the model says eviction may take. */
  evictionLoss: number;
}

/** The model's expectation as the replay reports it; null: no server is known for the request, so none is made. */
export function predictionOf(x: Expectation | undefined): Prediction | null {
  if (x === undefined) return null;
  return {
    infinite: x.infiniteGuaranteed,
    ceiling: x.infinitePossible,
    lower: x.guaranteed,
    upper: x.possible,
    evictionLoss: Math.max(0, x.infiniteGuaranteed - x.guaranteed),
  };
}

/** ok: within [lower, upper]; short: below lower (unexplained); over: above upper; unreported: no cached tokens. */
/** unjudged: no server is known for it (behind a router that named none), so it is no evidence either way. */
type RequestVerdict = "ok" | "short" | "over" | "unreported" | "failed" | "unjudged";

export interface CheckedRequest extends Prediction {
  index: number;
  observed: number;
  verdict: RequestVerdict;
}

export function judge(record: RequestRecord, prediction: Prediction | null): CheckedRequest {
  const observed = record.cachedTokens;
  const pred = prediction ?? { infinite: 0, ceiling: 0, lower: 0, upper: 0, evictionLoss: 0 };
  const verdict: RequestVerdict = !record.ok
    ? "failed"
    : observed < 0
      ? "unreported"
      : prediction === null
        ? "unjudged"
        : observed < pred.lower
          ? "short"
          : observed > pred.upper
            ? "over"
            : "ok";
  return { index: record.index, ...pred, observed, verdict };
}

/** What a set of checked requests adds up to (one window's, or the whole replay's). */
export interface CheckTotals {
  checked: number;
  ok: number;
  short: number;
  over: number;
  /** Tokens an infinite cache would have served, the model's lower bound, and what the server reported. */
  expectedInfiniteTokens: number;
  expectedLowerTokens: number;
  observedTokens: number;
  /** Hits the LRU model predicted eviction would take, and the observed shortfall below the infinite cache's. */
  predictedEvictionTokens: number;
  observedShortfallTokens: number;
}

export function totals(checked: readonly CheckedRequest[]): CheckTotals {
  const t: CheckTotals = {
    checked: 0,
    ok: 0,
    short: 0,
    over: 0,
    expectedInfiniteTokens: 0,
    expectedLowerTokens: 0,
    observedTokens: 0,
    predictedEvictionTokens: 0,
    observedShortfallTokens: 0,
  };
  for (const c of checked) {
    if (c.verdict === "failed" || c.verdict === "unreported" || c.verdict === "unjudged") continue;
    t.checked++;
    t[c.verdict]++;
    t.expectedInfiniteTokens += c.infinite;
    t.expectedLowerTokens += c.lower;
    t.observedTokens += c.observed;
    t.predictedEvictionTokens += c.evictionLoss;
    t.observedShortfallTokens += Math.max(0, c.infinite - c.observed);
  }
  return t;
}
