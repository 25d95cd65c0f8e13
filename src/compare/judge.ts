/** The delta of every compared metric of every pair, which side is better, and whether a limit was exceeded. */
import { COMPARE_METRICS, type CompareMetric } from "./metrics.ts";
import type { Limits } from "./limits.ts";
import type { LinePair } from "./pairing.ts";
import { field } from "./lines.ts";

/** "untrustworthy": NEW's client saturated, so its numbers may be the client's own delay, not the server's. */
export type Verdict = "REGRESSED" | "ok" | "better" | "worse" | "same" | "n/a" | "untrustworthy";

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
}

/** Percent by which `row` is worse than base in the metric's bad direction (negative: better). */
const regressionPct = (better: CompareMetric["better"], deltaPct: number): number => (better === "lower" ? deltaPct : -deltaPct);

export function judgePair(pair: LinePair, limits: Limits): DeltaRow[] {
  const untrustworthy = field(pair.next, "client_saturated") === true;
  const rows: DeltaRow[] = [];
  for (const m of COMPARE_METRICS) {
    const limitPct = limits.get(m.name) ?? null;
    if (!m.shown && limitPct === null) continue;
    const a = m.read(pair.base);
    const b = m.read(pair.next);
    const base = a.value;
    const next = b.value;
    const delta = base !== null && next !== null ? next - base : null;
    const deltaPct = delta !== null && base !== 0 ? (delta / base!) * 100 : null;
    let betterSide: DeltaRow["betterSide"] = null;
    let verdict: Verdict = "n/a";
    if (delta !== null) {
      const newIsBetter = m.better === "lower" ? delta < 0 : delta > 0;
      betterSide = delta === 0 ? "=" : newIsBetter ? "new" : "base";
      verdict = delta === 0 ? "same" : newIsBetter ? "better" : "worse";
      // A limit judges the relative change; from a base of 0 any worsening is unbounded.
      const worsePct = deltaPct === null ? (newIsBetter || delta === 0 ? 0 : Infinity) : regressionPct(m.better, deltaPct);
      if (limitPct !== null) verdict = worsePct > limitPct ? "REGRESSED" : verdict === "worse" ? "ok" : verdict;
      // Neither slower nor faster: a saturated client measured itself (evidence.ts fails the line for it).
      if (untrustworthy) verdict = "untrustworthy";
    }
    rows.push({
      pct: pair.pct, label: pair.label, metric: m.name, better: m.better, source: a.source === "hdr" && b.source === "hdr" ? "hdr" : "line",
      base, next, delta, deltaPct, betterSide, limitPct, verdict, forced: pair.differences.length > 0,
    });
  }
  return rows;
}
