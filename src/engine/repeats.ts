/**
 * A line's repeats (--repeat N): when to stop repeating it, and its gates judged once, on the mean over its repeats.
 * The verdicts go into the last repeat's line (its earlier repeats carry none), so a cell gets one verdict per gate
 * however many times it was measured, and `gates` still holds the numbers it was judged on (the mean, its interval).
 */
import type { RunOptions } from "../config/options.ts";
import { evaluateGates } from "../gates/evaluate.ts";
import type { GateResult } from "../schema/nested.ts";
import { gateApplies } from "../gates/parse.ts";
import type { Gate } from "../schema/gate.ts";
import { meanInterval } from "../metrics/intervals.ts";
import type { SweepLine } from "../metrics/sweep-line.ts";
import { axesOf } from "../schema/axes.ts";

/** What --repeat-until-cv watches on a line without a gate: the tail of the first token and the decode pace. */
const DEFAULT_CV_METRICS = ["p99_ttft_ms", "mean_itl_ms"] as const;

/** The repeats a line's mean is over: the complete ones (an interrupted repeat only when there is nothing else). */
const usable = (repeats: readonly SweepLine[]): readonly SweepLine[] => {
  const complete = repeats.filter((r) => !r.interrupted);
  return complete.length > 0 ? complete : repeats;
};

/** The values of `metric` over the repeats; null when a repeat could not measure it (no mean without every one). */
function valuesOf(repeats: readonly SweepLine[], metric: string): number[] | null {
  const values = repeats.map((r) => (r as Record<string, unknown>)[metric]);
  return values.every((v): v is number => typeof v === "number" && Number.isFinite(v)) ? values : null;
}

/** The metrics of the gates that judge this line, or the defaults when none does. */
export function watchedMetrics(gates: readonly Gate[], line: SweepLine): string[] {
  const axes = axesOf(line);
  const gated = [...new Set(gates.filter((g) => gateApplies(g, axes)).map((g) => g.metric))];
  return gated.length > 0 ? gated : [...DEFAULT_CV_METRICS];
}

/** The largest coefficient of variation of the watched metrics over the repeats (Infinity while it cannot be told). */
export function worstCv(repeats: readonly SweepLine[], gates: readonly Gate[]): number {
  const lines = usable(repeats);
  if (lines.length < 2) return Infinity;
  let worst = 0;
  for (const metric of watchedMetrics(gates, lines.at(-1)!)) {
    const values = valuesOf(lines, metric);
    const cv = values === null ? NaN : meanInterval(values).cv;
    // A metric with no value, or a mean of 0 (no CV), never lets the repeats stop early.
    worst = Math.max(worst, Number.isFinite(cv) ? Math.abs(cv) : Infinity);
  }
  return worst;
}

/** Whether the line has been measured enough: --repeat times, or (--repeat-until-cv) its CV is below the target. */
/** What decides a series' end and its verdict. */
export type RepeatRules = Pick<RunOptions, "repeat" | "repeatUntilCv" | "gates">;

export function repeatsDone(repeats: readonly SweepLine[], opts: RepeatRules): boolean {
  if (repeats.length >= (opts.repeat ?? 1)) return true;
  return opts.repeatUntilCv !== undefined && repeats.length >= 2 && worstCv(repeats, opts.gates) < opts.repeatUntilCv;
}

/** Every gate that holds the line, judged on the mean over its repeats, with the mean's 95 % interval. */
export function gatesOnMean(gates: readonly Gate[], repeats: readonly SweepLine[]): GateResult[] {
  const lines = usable(repeats);
  const last = lines.at(-1)!;
  const means: Record<string, number | null> = {};
  const intervals = new Map<string, { lo: number; hi: number }>();
  for (const metric of new Set(gates.map((g) => g.metric))) {
    const values = valuesOf(lines, metric);
    if (values === null) {
      means[metric] = null;
      continue;
    }
    const m = meanInterval(values);
    means[metric] = m.mean;
    intervals.set(metric, { lo: m.mean - m.half, hi: m.mean + m.half });
  }
  const judged = evaluateGates(gates, { ...last, ...means });
  const applied = gates.filter((g) => gateApplies(g, axesOf(last)));
  return judged.map((result, i) => {
    const ci = intervals.get(applied[i]!.metric);
    return { ...result, repeats: lines.length, ci95_low: ci?.lo ?? NaN, ci95_high: ci?.hi ?? NaN };
  });
}
