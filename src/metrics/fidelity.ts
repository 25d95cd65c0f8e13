/**
 * Are warm answers the same answers? Pure: a greedy answer after a cache hit against the answer after a proven flush,
 * classified at the first position where they differ. `near_tie`: the two chosen tokens are each in the other's top
 * list and no more than `tieNats` apart on either side (a numerics change on the cached path can flip such a token:
 * different GEMM shapes, a different reduction order); `diverged`: anything else, which no tie explains - suspect
 * wrong KV. Without top log-probabilities a difference is `unclassified`, and the line says why.
 */
import type { GreedyAnswer } from "../backends/greedy-answer.ts";

type FidelityVerdict = "identical" | "near_tie" | "diverged" | "unclassified";

export interface FidelityComparison {
  verdict: FidelityVerdict;
  /** The first position where the answers differ (0-based output token); null when identical. */
  position: number | null;
  /** The largest of the two sides' log-probability gaps between the two tokens there, nats; null when unknown. */
  gapNats: number | null;
  /** Why a difference is unclassified. */
  why: string | null;
}

/** Log-probabilities asked for per position: enough to see a runner-up, cheap for every engine. */
export const FIDELITY_TOP_K = 5;

export function compareAnswers(cold: GreedyAnswer, warm: GreedyAnswer, tieNats: number): FidelityComparison {
  const n = Math.min(cold.tokens.length, warm.tokens.length);
  let p = 0;
  while (p < n && cold.tokens[p] === warm.tokens[p]) p++;
  if (p === n && cold.tokens.length === warm.tokens.length) return { verdict: "identical", position: null, gapNats: null, why: null };
  // One answer ended before the other (greedy with ignore_eos should not): nothing to weigh at that position.
  if (p === n) return { verdict: "diverged", position: p, gapNats: null, why: null };
  if (cold.top === null || warm.top === null) {
    return { verdict: "unclassified", position: p, gapNats: null, why: "the server returned no top log-probabilities" };
  }
  const a = cold.tokens[p]!;
  const b = warm.tokens[p]!;
  const coldTop = cold.top[p]!;
  const warmTop = warm.top[p]!;
  if (coldTop.size === 0 || warmTop.size === 0) {
    return { verdict: "unclassified", position: p, gapNats: null, why: "the server returned no top log-probabilities at the diverging position" };
  }
  const coldA = coldTop.get(a),
    coldB = coldTop.get(b),
    warmA = warmTop.get(a),
    warmB = warmTop.get(b);
  if (coldA === undefined || coldB === undefined || warmA === undefined || warmB === undefined) {
    return { verdict: "diverged", position: p, gapNats: null, why: null };
  }
  const gapNats = Math.max(Math.abs(coldA - coldB), Math.abs(warmB - warmA));
  return { verdict: gapNats <= tieNats ? "near_tie" : "diverged", position: p, gapNats, why: null };
}

/** The fidelity keys of a line (key table), from its comparisons and the samples whose cache state was not proven. */
export interface FidelityGroup {
  fidelity_checked: number;
  /** Counts of compared answers: null when none was compared (0 would claim a check that never looked). */
  fidelity_identical: number | null;
  fidelity_near_tie: number | null;
  fidelity_diverged: number | null;
  fidelity_unclassified: number | null;
  fidelity_unproven: number;
  fidelity_first_divergence: number[];
  fidelity_max_gap_nats: number | null;
  fidelity_note: string | null;
}

export function fidelityGroup(comparisons: readonly FidelityComparison[], unproven: readonly string[]): FidelityGroup {
  const count = (v: FidelityVerdict) => (comparisons.length === 0 ? null : comparisons.filter((c) => c.verdict === v).length);
  const gaps = comparisons.flatMap((c) => (c.gapNats === null ? [] : [c.gapNats]));
  const why = [...new Set(comparisons.flatMap((c) => (c.why === null ? [] : [c.why])))];
  const notes = [...why, ...(unproven.length > 0 ? [`${unproven.length} sample(s) not counted: ${[...new Set(unproven)].join("; ")}`] : [])];
  return {
    fidelity_checked: comparisons.length,
    fidelity_identical: count("identical"),
    fidelity_near_tie: count("near_tie"),
    fidelity_diverged: count("diverged"),
    fidelity_unclassified: count("unclassified"),
    fidelity_unproven: unproven.length,
    fidelity_first_divergence: comparisons.flatMap((c) => (c.position === null ? [] : [c.position])).sort((x, y) => x - y),
    fidelity_max_gap_nats: gaps.length > 0 ? Math.max(...gaps) : null,
    fidelity_note: notes.length > 0 ? notes.join("; ") : null,
  };
}
