/**
 * Repeats (`run --repeat N`): lines of one run at the same axes, told apart by their `repeat` axis. Pairing keeps
 * one line per axes for the checks (evidence.ts); the verdicts read every repeat of it on both sides.
 */
import { labelOf } from "../schema/axes.ts";
import type { DeltaRow, PairRepeats } from "./judge.ts";
import { field, type CompareLine } from "./lines.ts";
import type { LinePair } from "./pairing.ts";

const isRepeat = (l: CompareLine): boolean => typeof field(l, "repeat") === "number";

/** The repeats of each line by its label (lines without a `repeat` axis are left out). */
export function repeatsByLabel(lines: readonly CompareLine[]): Map<string, CompareLine[]> {
  const out = new Map<string, CompareLine[]>();
  for (const l of lines.filter(isRepeat)) out.set(labelOf(l), [...(out.get(labelOf(l)) ?? []), l]);
  return out;
}

/** A pair's repeats on both sides; undefined when neither side repeated it (compare judges the single lines). */
export function pairRepeats(pair: LinePair, base: Map<string, CompareLine[]>, next: Map<string, CompareLine[]>): PairRepeats | undefined {
  const b = base.get(pair.label);
  const n = next.get(pair.label);
  if (b === undefined && n === undefined) return undefined;
  return { base: b ?? [pair.base], next: n ?? [pair.next] };
}

const signedPct = (v: number): string => `${v > 0 ? "+" : ""}${v.toFixed(1)}%`;

/** "mean_itl_ms at 0%: +10.5% (the run's own 95% CI -1.0%..+32.0%, limit 5%)". */
const describeNoisy = (r: DeltaRow): string =>
  `${r.metric} at ${r.label}: ${r.deltaPct === null ? "n/a" : signedPct(r.deltaPct)} (the run's own 95% CI ${r.ciPct!.map(signedPct).join("..")}, limit ${r.limitPct}%)`;

/**
 * How much the comparison knows of the noise: every pair with 2+ repeats a side, some, or none; `rows` tell which
 * intervals are a single run's own (no repeats: a bootstrap over its requests, the TTFT model's errors), and which
 * verdicts they made noisy.
 */
export function noiseNote(pairs: number, withInterval: number, rows: readonly DeltaRow[] = []): string {
  const single = new Set(rows.filter((r) => r.ciPct != null && r.repeats === undefined).map((r) => r.label));
  if (single.size > 0) {
    const repeated = new Set(rows.filter((r) => r.ciPct != null && r.repeats !== undefined).map((r) => r.label)).size;
    const noisy = rows.filter((r) => r.verdict === "noisy" && r.ciPct != null);
    return [
      "verdicts from 95 % intervals of Δ%",
      repeated > 0 ? `: Welch's over the repeats for ${repeated} line(s) (inconclusive when it straddles the limit), ` : ": ",
      `each single run's own for ${single.size} (a seeded bootstrap over its requests' samples; the TTFT model's terms from their least-squares errors). `,
      "A single run's change past the limit is REGRESSED only when its whole interval lies past the limit too; else it is noisy, not a failure (--repeat N decides)",
      noisy.length > 0 ? `. ${noisy.length} noisy: ${noisy.map(describeNoisy).join("; ")}` : "",
    ].join("");
  }
  if (withInterval === 0) {
    return "no noise estimate: the lines have no repeats on both sides (run --repeat N for 95 % intervals); each verdict compares single values with the limits";
  }
  if (withInterval < pairs)
    return `noise estimate for ${withInterval} of ${pairs} line(s) (2+ repeats a side); the others compare single values with the limits`;
  return "verdicts from 95 % Welch intervals of Δ% over the repeats: REGRESSED only when the whole interval lies past the limit, inconclusive when it straddles it";
}
