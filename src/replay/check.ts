/**
 * Each replayed request's observed cached tokens judged against its predicted range (metrics/predict-from-records.ts),
 * and the totals of a window or of the whole replay. Pure.
 */
import type { RequestRecord } from "../schema/record.ts";
import type { Prediction } from "../metrics/hit-predictor.ts";

/** ok: within [lower, upper]; short: below lower (unexplained); over: above upper; unreported: no cached tokens. */
export type RequestVerdict = "ok" | "short" | "over" | "unreported" | "failed";

export interface CheckedRequest extends Prediction {
  index: number;
  observed: number;
  verdict: RequestVerdict;
}

export function judge(record: RequestRecord, pred: Prediction): CheckedRequest {
  const observed = record.cachedTokens;
  const verdict: RequestVerdict = !record.ok ? "failed" : observed < 0 ? "unreported" : observed < pred.lower ? "short" : observed > pred.upper ? "over" : "ok";
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
    if (c.verdict === "failed" || c.verdict === "unreported") continue;
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
