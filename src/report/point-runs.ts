/**
 * The runs of a results file, whatever command measured them: a sweep's lines (points at pct x working set x rate)
 * or a multi-turn run's round lines (points at a round), each run with its lines in file order. What the console
 * report and merge read; grouped by run_id (a sweep run also by the run headers of files written by 0.1).
 */
import type { TtftModel } from "../metrics/ttft-model.ts";
import type { StoredSweepLine } from "../metrics/sweep-line.ts";
import type { LineKind } from "../schema/key-table.ts";
import { readResults } from "./results-file.ts";
import { groupRounds, readRoundLines, type RoundLine } from "./rounds.ts";

export type PointRun = {
  runId: string | null;
  /** The run's TTFT model (a sweep's: refitted from its lines' moments); null for a multi-turn run. */
  ttftModel: TtftModel | null;
  /** Whether the file says anything about a TTFT model for this run (the script's files and round lines do not). */
  hasTtftModel: boolean;
} & ({ kind: Extract<LineKind, "sweep">; lines: StoredSweepLine[] } | { kind: Extract<LineKind, "round">; lines: RoundLine[] });

/** Every run of a results file: its sweeps, then its multi-turn runs; a line that is not JSON is a UsageError naming it. */
export function readPointRuns(text: string, name?: string): PointRun[] {
  const sweeps = readResults(text, name).map(
    (r): PointRun => ({ kind: "sweep", runId: r.runId, lines: r.pcts, ttftModel: r.ttftModel, hasTtftModel: r.hasTtftModel }),
  );
  const rounds = groupRounds(readRoundLines(text)).map(
    (lines): PointRun => ({ kind: "round", runId: lines[0]?.run_id ?? null, lines, ttftModel: null, hasTtftModel: false }),
  );
  return [...sweeps, ...rounds];
}
