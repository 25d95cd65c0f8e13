/**
 * The lines compare reads: sweep (pct) lines and multi-turn round lines alike, of a file's last run. Everything after
 * this reads them by key and by their axes (schema/axes.ts), whichever command wrote them.
 */
import { UsageError } from "../errors.ts";
import { log } from "../log.ts";
import type { PctLine } from "../metrics/pct-record.ts";
import { parseJsonlLine } from "../report/jsonl.ts";
import { readResults } from "../report/results-file.ts";
import { isRoundLine, type RoundLine } from "../report/rounds.ts";
import { readResultsText } from "../report/runs.ts";
import { axesOf, isRoundAxes } from "../schema/axes.ts";
import type { CapacityLine } from "../schema/lines.ts";
import type { LineKind } from "../schema/key-table.ts";

export type CompareLine = PctLine | RoundLine | CapacityLine;

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

/** Lines of one kind (named by `marker` in their text) grouped into runs by run_id, in file order. */
function kindRuns<L extends CompareLine>(text: string, marker: string, is: (obj: unknown) => obj is L): { runId: string | null; lines: L[] }[] {
  const runs: { runId: string | null; lines: L[] }[] = [];
  for (const raw of text.split("\n")) {
    if (!raw.includes(marker)) continue;
    let obj: unknown;
    try {
      obj = parseJsonlLine(raw.trim());
    } catch {
      continue; // readResults already named any line that is not JSON
    }
    if (!is(obj)) continue;
    const runId = typeof obj.run_id === "string" ? obj.run_id : null;
    if (runs.at(-1)?.runId !== runId) runs.push({ runId, lines: [] });
    runs.at(-1)!.lines.push(obj);
  }
  return runs;
}

/** Every run of a results file: its pct runs, then its round runs (each with its lines in file order). */
export function fileRuns(file: string, who: string): { runId: string | null; lines: CompareLine[] }[] {
  const text = readResultsText(file, who);
  return [...readResults(text, file).map((r) => ({ runId: r.runId, lines: r.pcts as CompareLine[] })), ...kindRuns(text, '"round"', isRoundLine)];
}

/**
 * The lines compare reads of a run: a capacity search's capacity lines (one per pct: its probes are the search's
 * evidence, each at a load of its own, not points to pair), else its points.
 */
function comparedLines(text: string, run: { runId: string | null; lines: CompareLine[] }): CompareLine[] {
  const capacity = kindRuns(text, '"capacity"', isCapacityLine)
    .filter((r) => r.runId === run.runId)
    .flatMap((r) => r.lines);
  return capacity.length > 0 ? capacity : run.lines;
}

/** The lines of a file's last run (a file may hold several: a warning says which one is compared). */
export function lastRunLines(file: string, side: string): CompareLine[] {
  const runs = fileRuns(file, "compare");
  const last = runs.at(-1);
  if (last === undefined) throw new UsageError(`compare: ${side} ${file} holds no pct or round line`);
  if (runs.length > 1) log.warn(`compare: ${file} holds ${runs.length} runs; comparing its last (run_id ${last.runId ?? "none"})`);
  return comparedLines(readResultsText(file, "compare"), last);
}
