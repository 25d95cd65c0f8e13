/**
 * `warmbench report FILE` on the console: one path for any point. The file's runs are read once as point runs
 * (point-runs.ts: a sweep's lines or a multi-turn run's round lines); each run is laid out by the axes its lines
 * have, exactly as its command printed it live: a sweep's lines as the script's per-pct blocks then the sweep table,
 * a multi-turn run's as one round table.
 */
import { renderRunsReport } from "./console.ts";
import { readPointRuns, type PointRun } from "./point-runs.ts";
import { renderRoundsReport } from "./rounds.ts";

/** One run's console text, in the layout of its lines' axes. */
function renderPointRun(run: PointRun): string {
  if (run.kind === "round") return renderRoundsReport(run.lines);
  return renderRunsReport([{ runId: run.runId, pcts: run.lines, ttftModel: run.ttftModel, hasTtftModel: run.hasTtftModel }]);
}

/** The console report of a results file's text: every run, sweeps then multi-turn runs (a bad line: UsageError naming it). */
export function renderConsoleReport(text: string, name?: string): string {
  return readPointRuns(text, name).map(renderPointRun).join("");
}
