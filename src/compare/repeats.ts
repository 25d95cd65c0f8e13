/**
 * Repeats (`run --repeat N`): lines of one run at the same axes, told apart by their `repeat` axis. Pairing keeps
 * one line per axes for the checks (evidence.ts); the verdicts read every repeat of it on both sides.
 */
import { labelOf } from "../schema/axes.ts";
import type { PairRepeats } from "./judge.ts";
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

/** How much the comparison knows of the noise: every pair with 2+ repeats a side, some, or none. */
export function noiseNote(pairs: number, withInterval: number): string {
  if (withInterval === 0) {
    return "no noise estimate: the lines have no repeats on both sides (run --repeat N for 95 % intervals); each verdict compares single values with the limits";
  }
  if (withInterval < pairs)
    return `noise estimate for ${withInterval} of ${pairs} line(s) (2+ repeats a side); the others compare single values with the limits`;
  return "verdicts from 95 % Welch intervals of Δ% over the repeats: REGRESSED only when the whole interval lies past the limit, inconclusive when it straddles it";
}
