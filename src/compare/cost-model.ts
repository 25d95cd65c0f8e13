/**
 * The cost model judged: each run's TTFT model (TTFT = fixed + slope x uncached tokens), fitted over all its sweep
 * lines from their `ttft_fit` moments, compared term by term with an interval. A per-token prefill regression moves
 * mean TTFT only as much as prefill is a share of it (at a 90 % shared prefix, little), so a mean-TTFT limit lets it
 * through; the slope names it. With 2+ repeats a side: Welch's interval over each repeat's own fit (as every metric
 * with repeats); without: the fit's standard errors, judged as a single run. Its requests' scatter is not all of a
 * run's noise: a whole line's TTFT moves with the box, and every request of it with the line, so the errors are the
 * larger of the requests' least-squares ones and those of the line means about the fit (3+ lines). A run of two lines
 * (0 and 90 %) fits both exactly and cannot know that noise: its change past a limit is noisy, never REGRESSED.
 */
import { fitFromMoments, mergeTtftMoments, type TtftMoments } from "../metrics/ttft-model.ts";
import { estimateDiffInterval, lineFitErrors, mean, welchInterval } from "../metrics/intervals.ts";
import { intervalVerdict, pointVerdict, regressionInterval, withinRunVerdict, type DeltaRow, type Verdict } from "./judge.ts";
import { field, lineKindOf, type CompareLine } from "./lines.ts";
import { labelOf } from "../schema/axes.ts";
import { COST_MODEL, compareMetric, type CompareMetric } from "./metrics.ts";
import type { Limits } from "./limits.ts";

/**
 * Where the rows sit: at the run's last line, whose `ttft_model` is the model over all its lines (as the line's key
 * says), so the table and its count of lines stay the pairs'.
 */
function placeOf(lines: readonly CompareLine[]): { pct: number | null; label: string } {
  const last = lines.filter((l) => lineKindOf(l) === "sweep").at(-1);
  if (last === undefined) return { pct: null, label: "all lines" };
  const pct = field(last, "shared_prefix_pct");
  return { pct: typeof pct === "number" ? pct : null, label: labelOf(last) };
}

const isMoments = (v: unknown): v is TtftMoments =>
  typeof v === "object" &&
  v !== null &&
  ["n", "mean_uncached_tokens", "mean_ttft_ms", "m2_uncached_tokens", "m2_ttft_ms", "c_uncached_ttft"].every((k) =>
    Number.isFinite((v as Record<string, unknown>)[k]),
  );

/** The moments of a set of lines (their sweep lines' fits merged). */
const pooled = (lines: readonly CompareLine[]): TtftMoments | null =>
  lines
    .filter((l) => lineKindOf(l) === "sweep")
    .map((l) => field(l, "ttft_fit"))
    .filter(isMoments)
    .reduce<TtftMoments | null>((acc, m) => mergeTtftMoments(acc, m), null);

/** The lines of each repeat (the `repeat` axis); one group when the run has none. */
function repeatGroups(lines: readonly CompareLine[]): CompareLine[][] {
  const groups = new Map<unknown, CompareLine[]>();
  for (const l of lines) groups.set(field(l, "repeat"), [...(groups.get(field(l, "repeat")) ?? []), l]);
  return [...groups.values()];
}

interface Term {
  metric: CompareMetric;
  /** The term's value of a fit, and its standard error. */
  of(fit: FitErrors): { value: number; se: number };
  /** The term of a fitted model (one repeat's). */
  ofModel(model: NonNullable<ReturnType<typeof fitFromMoments>>): number;
}

const TERMS: readonly Term[] = [
  { metric: compareMetric(COST_MODEL.fixedMs)!, of: (f) => ({ value: f.intercept, se: f.interceptSe }), ofModel: (m) => m.fixed_ms },
  {
    metric: compareMetric(COST_MODEL.prefillUsPerToken)!,
    of: (f) => ({ value: f.slope * 1000, se: f.slopeSe * 1000 }),
    ofModel: (m) => m.prefill_us_per_token,
  },
];

const errorsOf = (m: TtftMoments | null) =>
  m === null
    ? null
    : lineFitErrors({ n: m.n, meanX: m.mean_uncached_tokens, meanY: m.mean_ttft_ms, m2X: m.m2_uncached_tokens, m2Y: m.m2_ttft_ms, cXY: m.c_uncached_ttft });

type FitErrors = NonNullable<ReturnType<typeof lineFitErrors>>;

/** The moments of each sweep line with a fit. */
const lineMoments = (lines: readonly CompareLine[]): TtftMoments[] =>
  lines
    .filter((l) => lineKindOf(l) === "sweep")
    .map((l) => field(l, "ttft_fit"))
    .filter(isMoments)
    .filter((m) => m.n > 0);

/**
 * The errors of the line means about the fit (each line weighted by its requests): s² = Σ n_g r_g² / (L - 2) over
 * the L lines' residuals; null under 3 lines. With every line at one uncached length (a sweep line's prompts share
 * it), the weighted fit of the means is the fit of the requests, so only the errors differ.
 */
function lineMeanErrors(lines: readonly TtftMoments[]): FitErrors | null {
  if (lines.length < 3) return null;
  const between = lines.reduce<TtftMoments | null>((acc, m) => mergeTtftMoments(acc, { ...m, m2_uncached_tokens: 0, m2_ttft_ms: 0, c_uncached_ttft: 0 }), null);
  const f = errorsOf(between);
  if (f === null) return null;
  // lineFitErrors divides the residuals by n - 2 requests; the means have L - 2 degrees of freedom.
  const scale = Math.sqrt(f.df / (lines.length - 2));
  return { ...f, slopeSe: f.slopeSe * scale, interceptSe: f.interceptSe * scale, df: lines.length - 2 };
}

/** A side's fit: the requests' least-squares errors and, from 3 lines, the line means'. */
function sideFit(lines: readonly CompareLine[]): { fit: FitErrors; byLines: FitErrors | null } | null {
  const fit = errorsOf(pooled(lines));
  return fit === null ? null : { fit, byLines: lineMeanErrors(lineMoments(lines)) };
}

/** A term of a side's fit with the larger of its two errors (and that error's degrees of freedom). */
function estimate(side: { fit: FitErrors; byLines: FitErrors | null }, term: Term): { value: number; se: number; df: number } {
  const own = { ...term.of(side.fit), df: side.fit.df };
  if (side.byLines === null) return own;
  const lines = term.of(side.byLines);
  return lines.se > own.se ? { value: own.value, se: lines.se, df: side.byLines.df } : own;
}

/** Each repeat's own fitted value of a term (repeats whose lines give no slope are left out). */
const repeatValues = (groups: readonly CompareLine[][], term: Term): number[] =>
  groups.flatMap((g) => {
    const model = fitFromMoments(pooled(g));
    return model === null ? [] : [term.ofModel(model)];
  });

/**
 * The TTFT model's terms of BASE against NEW, one row each: judged when a limit names it, shown when either run has
 * a model (2+ distinct uncached lengths: a sweep over 2+ pcts).
 */
export function judgeCostModel(base: readonly CompareLine[], next: readonly CompareLine[], limits: Limits, only: readonly string[] | null): DeltaRow[] {
  const fits = { base: sideFit(base), next: sideFit(next) };
  const groups = { base: repeatGroups(base), next: repeatGroups(next) };
  const rows: DeltaRow[] = [];
  const place = placeOf(next.length > 0 ? next : base);
  for (const term of TERMS) {
    const m = term.metric;
    const limitPct = limits.get(m.name) ?? null;
    if (only !== null ? !only.includes(m.name) : !m.shown && limitPct === null) continue;
    // A run of one pct has no model (one uncached length): no row, unless --only asks for it (then n/a says so).
    if (fits.base === null && fits.next === null && !(only?.includes(m.name) ?? false)) continue;
    const reps = { base: repeatValues(groups.base, term), next: repeatValues(groups.next, term) };
    const withRepeats = groups.base.length >= 2 && groups.next.length >= 2 && reps.base.length >= 2 && reps.next.length >= 2;
    const a = fits.base === null ? null : estimate(fits.base, term);
    const b = fits.next === null ? null : estimate(fits.next, term);
    const baseValue = withRepeats ? mean(reps.base) : (a?.value ?? null);
    const nextValue = withRepeats ? mean(reps.next) : (b?.value ?? null);
    let ciPct: [number, number] | null = null;
    if (baseValue !== null && nextValue !== null && baseValue !== 0) {
      const diff = withRepeats ? welchInterval(reps.base, reps.next) : estimateDiffInterval(a!, b!);
      // Both terms are costs, never below 0: an interval of the change never below -100 %.
      ciPct = [Math.max(-100, (diff.lo / Math.abs(baseValue)) * 100), Math.max(-100, (diff.hi / Math.abs(baseValue)) * 100)];
    }
    const delta = baseValue !== null && nextValue !== null ? nextValue - baseValue : null;
    const deltaPct = delta !== null && baseValue !== 0 ? (delta / Math.abs(baseValue!)) * 100 : null;
    let verdict: Verdict = "n/a";
    if (delta !== null && ciPct !== null && deltaPct !== null) {
      const [lo, hi] = regressionInterval(m.better, ciPct);
      const worsePct = m.better === "lower" ? deltaPct : -deltaPct;
      // Two lines a side fit exactly: their line-level noise is unknown, so one run cannot confirm a change.
      const linesKnown = fits.base?.byLines != null && fits.next?.byLines != null;
      verdict = withRepeats
        ? intervalVerdict(lo, hi, limitPct)
        : withinRunVerdict(pointVerdict(m.better, delta, worsePct, limitPct), linesKnown ? lo : -Infinity, limitPct);
    }
    rows.push({
      ...place,
      metric: m.name,
      better: m.better,
      source: "line",
      base: baseValue,
      next: nextValue,
      delta,
      deltaPct,
      betterSide: delta === null ? null : delta === 0 ? "=" : (m.better === "lower" ? delta < 0 : delta > 0) ? "new" : "base",
      limitPct,
      verdict,
      forced: false,
      ciPct,
      ...(withRepeats ? { repeats: [reps.base.length, reps.next.length] as [number, number] } : {}),
    });
  }
  return rows;
}
