/** The delta of every compared metric of every pair, which side is better, and whether a limit was exceeded. */
import { metricsOf, type CompareMetric } from "./metrics.ts";
import type { Limits } from "./limits.ts";
import type { LinePair } from "./pairing.ts";
import { field, type CompareLine } from "./lines.ts";
import { mean, welchInterval } from "../metrics/intervals.ts";
import { withinRunChangePct } from "./within-run.ts";

/**
 * "untrustworthy": NEW's client saturated, so its numbers may be the client's own delay, not the server's.
 * "inconclusive": with repeats on both sides, the difference's 95 % interval straddles the limit.
 * "noisy": without repeats, the change is past the limit but the run's own 95 % interval (a bootstrap over its
 * requests, within-run.ts) reaches below it: one run cannot tell it from noise. Not a failure (a gate that fails on
 * noise is switched off); --repeat N decides.
 */
export type Verdict = "REGRESSED" | "ok" | "better" | "worse" | "same" | "n/a" | "untrustworthy" | "inconclusive" | "noisy";

export interface DeltaRow {
  /** The sweep line's pct; null for a round line. */
  pct: number | null;
  /** The line by its axes (schema/axes.ts): "50%", "50% @ 8 req/s" in a rate sweep, "round 3". */
  label: string;
  metric: string;
  better: CompareMetric["better"];
  source: "hdr" | "line";
  base: number | null;
  next: number | null;
  delta: number | null;
  /** (new - base) / base x 100; null when base is 0 or a side is missing. */
  deltaPct: number | null;
  /** Which side is better: "base", "new" or "=" (equal), null when a side is missing. */
  betterSide: "base" | "new" | "=" | null;
  /** Allowed regression, percent, or null without a limit. */
  limitPct: number | null;
  verdict: Verdict;
  /** The pair was compared although its workloads differ (--force). */
  forced: boolean;
  /**
   * The 95 % interval of Δ%: with repeats on both sides Welch's over them, and the repeats per side (base and next are
   * means); without, the run's own (a bootstrap over each line's requests; no repeats).
   */
  ciPct?: [number, number] | null;
  repeats?: [number, number];
}

/** Every repeat of a pair's line on each side (the `repeat` axis): two or more a side give the verdict a noise estimate. */
export interface PairRepeats {
  base: readonly CompareLine[];
  next: readonly CompareLine[];
}

/** Percent by which `row` is worse than base in the metric's bad direction (negative: better). */
const regressionPct = (better: CompareMetric["better"], deltaPct: number): number => (better === "lower" ? deltaPct : -deltaPct);

const values = (m: CompareMetric, lines: readonly CompareLine[]): number[] => lines.map((l) => m.read(l).value).filter((v): v is number => v !== null);

/**
 * The verdict from the 95 % interval of Δ% (`regLo`..`regHi`, worse positive): REGRESSED only when the whole interval
 * lies past the limit, inconclusive when it straddles it; without a limit, worse or better only when it excludes 0.
 */
export function intervalVerdict(regLo: number, regHi: number, limitPct: number | null): Verdict {
  if (limitPct !== null && regLo > limitPct) return "REGRESSED";
  if (limitPct !== null && regHi > limitPct) return "inconclusive";
  if (regHi < 0) return "better";
  return limitPct === null && regLo > 0 ? "worse" : "same";
}

/**
 * The verdict of single values: worse, better or same, and against a limit REGRESSED past it, ok within it (`worsePct`:
 * the change in the bad direction, percent).
 */
export function pointVerdict(better: CompareMetric["better"], delta: number, worsePct: number, limitPct: number | null): Verdict {
  const newIsBetter = better === "lower" ? delta < 0 : delta > 0;
  const verdict: Verdict = delta === 0 ? "same" : newIsBetter ? "better" : "worse";
  if (limitPct === null) return verdict;
  return worsePct > limitPct ? "REGRESSED" : verdict === "worse" ? "ok" : verdict;
}

/**
 * A single run's verdict with its own interval (`regLo`: its low end, worse positive): a change past the limit is
 * REGRESSED only when the whole interval lies past it too, else "noisy" (one run cannot confirm it); every other
 * verdict is the single values' (an interval only ever withdraws a failure the run's noise could have made).
 */
export const withinRunVerdict = (point: Verdict, regLo: number, limitPct: number | null): Verdict =>
  point === "REGRESSED" && limitPct !== null && !(regLo > limitPct) ? "noisy" : point;

/** The interval in the metric's bad direction (worse positive). */
export const regressionInterval = (better: CompareMetric["better"], ciPct: [number, number]): [number, number] =>
  better === "lower" ? ciPct : [-ciPct[1], -ciPct[0]];

/** `only`: judge and show just these metrics (--only); null: every shown one and every limited one. */
export function judgePair(pair: LinePair, limits: Limits, repeats?: PairRepeats, only: readonly string[] | null = null): DeltaRow[] {
  const untrustworthy = field(pair.next, "client_saturated") === true;
  const rows: DeltaRow[] = [];
  // The metrics of the pair's kind of line: a capacity line is judged on its capacity, a point on its latencies.
  for (const m of metricsOf(pair.base)) {
    // A number of the whole run (the TTFT model) is judged once per pair of runs (cost-model.ts).
    if (m.scope === "run") continue;
    const limitPct = limits.get(m.name) ?? null;
    if (only !== null ? !only.includes(m.name) : !m.shown && limitPct === null) continue;
    const a = m.read(pair.base);
    const b = m.read(pair.next);
    const reps = repeats ? { base: values(m, repeats.base), next: values(m, repeats.next) } : null;
    const noise = reps !== null && reps.base.length >= 2 && reps.next.length >= 2 ? welchInterval(reps.base, reps.next) : null;
    // With repeats, each side is its mean over them.
    const base = reps && reps.base.length > 0 ? mean(reps.base) : a.value;
    const next = reps && reps.next.length > 0 ? mean(reps.next) : b.value;
    const delta = base !== null && next !== null ? next - base : null;
    const deltaPct = delta !== null && base !== 0 ? (delta / base!) * 100 : null;
    // The interval of the difference in percent of BASE's mean (its own noise is already in the interval's width).
    const ciPct: [number, number] | null =
      noise !== null && noise.meanBase !== 0 ? [(noise.lo / Math.abs(noise.meanBase)) * 100, (noise.hi / Math.abs(noise.meanBase)) * 100] : null;
    // Without repeats, the run's own noise: each line's per-request samples.
    const withinRun = reps === null ? withinRunChangePct(m, pair.label, pair.base, pair.next) : null;
    let betterSide: DeltaRow["betterSide"] = null;
    let verdict: Verdict = "n/a";
    if (delta !== null) {
      const newIsBetter = m.better === "lower" ? delta < 0 : delta > 0;
      betterSide = delta === 0 ? "=" : newIsBetter ? "new" : "base";
      // A limit judges the relative change; from a base of 0 any worsening is unbounded.
      const worsePct = deltaPct === null ? (newIsBetter || delta === 0 ? 0 : Infinity) : regressionPct(m.better, deltaPct);
      verdict = pointVerdict(m.better, delta, worsePct, limitPct);
      if (ciPct !== null) {
        const [lo, hi] = regressionInterval(m.better, ciPct);
        verdict = intervalVerdict(lo, hi, limitPct);
      } else if (withinRun !== null) verdict = withinRunVerdict(verdict, regressionInterval(m.better, withinRun)[0], limitPct);
      // Neither slower nor faster: a saturated client measured itself (evidence.ts fails the line for it).
      if (untrustworthy) verdict = "untrustworthy";
    }
    rows.push({
      pct: pair.pct,
      label: pair.label,
      metric: m.name,
      better: m.better,
      source: a.source === "hdr" && b.source === "hdr" ? "hdr" : "line",
      base,
      next,
      delta,
      deltaPct,
      betterSide,
      limitPct,
      verdict,
      forced: pair.differences.length > 0,
      ...(reps ? { ciPct, repeats: [reps.base.length, reps.next.length] as [number, number] } : {}),
      // The table keeps its columns for single runs (no "95% CI", "n"): the noise note gives a noisy row's interval.
      ...(withinRun !== null ? { ciPct: withinRun } : {}),
    });
  }
  return rows;
}
