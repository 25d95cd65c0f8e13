/**
 * The lines compare reads: sweep (pct) lines and multi-turn round lines alike, of a file's last run. Everything after
 * this reads them by key and by their axes (schema/axes.ts), whichever command wrote them.
 */
import { UsageError } from "../errors.ts";
import { log } from "../log.ts";
import type { StoredSweepLine } from "../metrics/sweep-line.ts";
import { readResultLines, readResults } from "../report/results-file.ts";
import { isRoundLine, type RoundLine } from "../report/rounds.ts";
import { readResultsText } from "../report/runs.ts";
import { axesOf, isRoundAxes } from "../schema/axes.ts";
import type { CapacityLine } from "../schema/lines.ts";
import type { LineKind } from "../schema/key-table.ts";

export type CompareLine = StoredSweepLine | RoundLine | CapacityLine;

/** A key of any kind of line (undefined where the line has none). */
export const field = (line: CompareLine, key: string): unknown => (line as Record<string, unknown>)[key];

const isCapacityLine = (obj: unknown): obj is CapacityLine =>
  typeof obj === "object" &&
  obj !== null &&
  (obj as Record<string, unknown>).type === "capacity" &&
  typeof (obj as Record<string, unknown>).shared_prefix_pct === "number";

/** The kind of a line as read: a capacity line says so; a round line sits at a round; else a sweep line. */
export function lineKindOf(line: object): LineKind {
  if ((line as Record<string, unknown>).type === "capacity") return "capacity";
  return isRoundAxes(axesOf(line)) ? "round" : "sweep";
}

/** Lines of one kind grouped into runs by run_id, in file order (the lines as readResults read and checked them). */
function kindRuns<L extends CompareLine>(lines: readonly Record<string, unknown>[], is: (obj: unknown) => obj is L): { runId: string | null; lines: L[] }[] {
  const runs: { runId: string | null; lines: L[] }[] = [];
  for (const obj of lines) {
    if (!is(obj)) continue;
    const runId = typeof obj.run_id === "string" ? obj.run_id : null;
    if (runs.at(-1)?.runId !== runId) runs.push({ runId, lines: [] });
    runs.at(-1)!.lines.push(obj);
  }
  return runs;
}

interface FileRun {
  runId: string | null;
  lines: CompareLine[];
}

/** Every run of a results file (its pct runs, then its round runs), and its capacity runs apart. */
function readFileRuns(file: string, who: string): { runs: FileRun[]; capacity: { runId: string | null; lines: CapacityLine[] }[] } {
  const text = readResultsText(file, who);
  const pctRuns = readResults(text, file).map((r) => ({ runId: r.runId, lines: r.pcts as CompareLine[] }));
  const lines = readResultLines(text, file);
  return { runs: [...pctRuns, ...kindRuns(lines, isRoundLine)], capacity: kindRuns(lines, isCapacityLine) };
}

/** Every run of a results file: its pct runs, then its round runs (each with its lines in file order). */
export function fileRuns(file: string, who: string): FileRun[] {
  return readFileRuns(file, who).runs;
}

/**
 * The lines of a file's last run (a file may hold several: a warning says which one is compared): a capacity
 * search's capacity lines (one per pct: its probes are the search's evidence, each at a load of its own, not points
 * to pair), else its points.
 */
export function lastRunLines(file: string, side: string): CompareLine[] {
  const { runs, capacity } = readFileRuns(file, "compare");
  const last = runs.at(-1);
  if (last === undefined) throw new UsageError(`compare: ${side} ${file} holds no pct or round line`);
  if (runs.length > 1) log.warn(`compare: ${file} holds ${runs.length} runs; comparing its last (run_id ${last.runId ?? "none"})`);
  const lines = capacity.filter((r) => r.runId === last.runId).flatMap((r) => r.lines);
  return lines.length > 0 ? lines : last.lines;
}

/**
 * What compare says of a side whose lines predate the evidence block (0.1-0.3): they are read as such and judged only
 * on the keys they hold; null when every line carries its evidence (or is a capacity line, which has none).
 */
export function olderLinesNote(lines: readonly CompareLine[], side: string, name: string): string | null {
  const older = lines.filter((l) => field(l, "type") !== "capacity" && field(l, "evidence") === undefined);
  if (older.length === 0) return null;
  const version = field(older[0]!, "warmbench_version") ?? (field(older[0]!, "run") as { warmbench_version?: unknown } | undefined)?.warmbench_version;
  const by = typeof version === "string" ? `warmbench ${version}` : "the reference script or a build before 0.4";
  return `compare: ${side} ${name}: ${older.length} of ${lines.length} line(s) written by ${by}, without an evidence block: judged only on the keys they hold`;
}
