/**
 * The cells of a sweep, in the order they run: every pct, and within it every working-set size. One pct line per
 * cell; shards run the same cells in the same order (their prompt RNG must stay in step with the coordinator's).
 */
import type { RunOptions } from "../options.ts";

export interface SweepCell {
  pct: number;
  workingSet: number;
}

export function sweepCells(opts: Pick<RunOptions, "pcts" | "workingSets">): SweepCell[] {
  return opts.pcts.flatMap((pct) => opts.workingSets.map((workingSet) => ({ pct, workingSet })));
}
