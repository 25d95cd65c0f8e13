/**
 * The cells of a sweep, in the order they run: every pct, and within it every working-set size; within a cell, one
 * line per request rate, and within a line each of its --repeat measurements, innermost (a job: what shards are
 * released to run). Shards run the same jobs in the same order (their prompt RNG must stay in step with the
 * coordinator's).
 */
import type { RunOptions } from "../config/options.ts";

export interface SweepCell {
  pct: number;
  workingSet: number;
}

export function sweepCells(opts: Pick<RunOptions, "pcts" | "workingSets">): SweepCell[] {
  return opts.pcts.flatMap((pct) => opts.workingSets.map((workingSet) => ({ pct, workingSet })));
}

/** One line of the sweep: a cell at one request rate. */
export interface SweepJob extends SweepCell {
  /** Position of the cell in sweepCells. */
  cell: number;
  /** Position of the rate in --request-rate. */
  rateIndex: number;
  /** Which measurement of the line (--repeat: 0..N-1); null without --repeat. */
  repeat: number | null;
}

/** The repeats of every line: 0..N-1 with --repeat N, else the one unnumbered measurement. */
export const repeatsOf = (opts: Pick<RunOptions, "repeat">): (number | null)[] =>
  opts.repeat === undefined ? [null] : Array.from({ length: opts.repeat }, (_, i) => i);

export function sweepJobs(opts: Pick<RunOptions, "pcts" | "workingSets" | "requestRates" | "repeat">): SweepJob[] {
  return sweepCells(opts).flatMap((c, cell) =>
    opts.requestRates.flatMap((_, rateIndex) => repeatsOf(opts).map((repeat) => ({ ...c, cell, rateIndex, repeat }))),
  );
}
