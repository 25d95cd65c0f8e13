/**
 * The axes of a measured line, whichever command made it: a sweep line sits at (shared prefix pct, working set,
 * request rate), a multi-turn round line at its round. Gates select lines by them, compare pairs lines by them, and
 * every message names a line by them.
 */

/**
 * Every axis a line can have, in the order a label shows them. `repeat` (run --repeat) tells apart the measurements
 * of one line, not lines: a label leaves it out, so compare, gates and history group a line's repeats by their label.
 */
export const AXES = ["shared_prefix_pct", "working_set", "request_rate", "window", "round", "repeat", "probe"] as const;
export type Axis = (typeof AXES)[number];

/**
 * Axes whose lines are steps of a search (a capacity search's probes): the search chose where they sit, so they are
 * no points to pair or sum across runs, and their gates steer the search rather than judge the run.
 */
const SEARCH_STEP_AXES: readonly Axis[] = ["probe"];
export const isSearchStep = (line: object): boolean => SEARCH_STEP_AXES.some((axis) => typeof (line as Record<string, unknown>)[axis] === "number");

/** Where a sweep line sits: request_rate is Infinity in a closed loop; a trace replay's window lines add `window`. */
export interface SweepAxes {
  shared_prefix_pct: number;
  working_set: number;
  request_rate: number;
  /** A capacity search's probe (warmbench capacity): its place in the pct's search. */
  probe?: number;
  /** A trace replay's window (warmbench replay): its place in trace time. */
  window?: number;
}

/** Where a multi-turn round line sits (0-based). */
export interface RoundAxes {
  round: number;
}

export type LineAxes = SweepAxes | RoundAxes;
/** What gates read of a line: a sweep point or a round (the key table's LineKind names every kind of line). */
export type AxesKind = "pct" | "round";

export const isRoundAxes = (a: LineAxes): a is RoundAxes => "round" in a;
export const kindOf = (a: LineAxes): AxesKind => (isRoundAxes(a) ? "round" : "pct");

/**
 * The axes of a line as read from a file or built in memory. Files written before --working-set and the script's own
 * have no working set (1) and a closed loop writes no finite rate.
 */
export function axesOf(line: object): LineAxes {
  const l = line as Record<string, unknown>;
  if (l.type === "round" || (typeof l.round === "number" && typeof l.shared_prefix_pct !== "number")) return { round: Number(l.round) };
  const axes: SweepAxes = {
    shared_prefix_pct: Number(l.shared_prefix_pct),
    working_set: typeof l.working_set === "number" ? l.working_set : 1,
    request_rate: typeof l.request_rate === "number" ? l.request_rate : Infinity,
  };
  if (typeof l.window === "number") axes.window = l.window;
  if (typeof l.probe === "number") axes.probe = l.probe;
  return axes;
}

/**
 * "round 3"; "50%", "50% ws=4", "50% @ 8 req/s", "84% @ 20 req/s window 3": the working set and the rate only where they are not the script's
 * (the same words as the sweep table's and report/line-label.ts).
 */
export function axesLabel(a: LineAxes): string {
  if (isRoundAxes(a)) return `round ${a.round}`;
  const ws = a.working_set > 1 ? ` ws=${a.working_set}` : "";
  const rate = Number.isFinite(a.request_rate) ? ` @ ${a.request_rate} req/s` : "";
  const window = a.window === undefined ? "" : ` window ${a.window}`;
  const probe = a.probe === undefined ? "" : ` probe ${a.probe}`;
  return `${a.shared_prefix_pct}%${ws}${rate}${window}${probe}`;
}

/** A line's label: `axesLabel(axesOf(line))`. */
export const labelOf = (line: object): string => axesLabel(axesOf(line));

/** The sweep's lines as its flags plan them: every pct x working set x request rate. */
export function plannedSweepAxes(pcts: readonly number[], workingSets: readonly number[], requestRates: readonly number[]): SweepAxes[] {
  return pcts.flatMap((shared_prefix_pct) =>
    workingSets.flatMap((working_set) => requestRates.map((request_rate) => ({ shared_prefix_pct, working_set, request_rate }))),
  );
}

/** A multi-turn run's lines: rounds 0..numRounds-1. */
export const plannedRoundAxes = (numRounds: number): RoundAxes[] => Array.from({ length: numRounds }, (_, round) => ({ round }));
