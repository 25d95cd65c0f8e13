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

export type CompareLine = PctLine | RoundLine;

/** A key of either kind of line (undefined where the line has none). */
export const field = (line: CompareLine, key: string): unknown => (line as Record<string, unknown>)[key];

/** Round lines grouped into runs by run_id, in file order. */
function roundRuns(text: string): { runId: string | null; lines: RoundLine[] }[] {
  const runs: { runId: string | null; lines: RoundLine[] }[] = [];
  for (const raw of text.split("\n")) {
    if (!raw.includes('"round"')) continue;
    let obj: unknown;
    try {
      obj = parseJsonlLine(raw.trim());
    } catch {
      continue; // readResults already named any line that is not JSON
    }
    if (!isRoundLine(obj)) continue;
    const runId = typeof obj.run_id === "string" ? obj.run_id : null;
    if (runs.at(-1)?.runId !== runId) runs.push({ runId, lines: [] });
    runs.at(-1)!.lines.push(obj);
  }
  return runs;
}

/** Every run of a results file: its pct runs, then its round runs (each with its lines in file order). */
export function fileRuns(file: string, who: string): { runId: string | null; lines: CompareLine[] }[] {
  const text = readResultsText(file, who);
  return [...readResults(text, file).map((r) => ({ runId: r.runId, lines: r.pcts as CompareLine[] })), ...roundRuns(text)];
}

/** The lines of a file's last run (a file may hold several: a warning says which one is compared). */
export function lastRunLines(file: string, side: string): CompareLine[] {
  const runs = fileRuns(file, "compare");
  const last = runs.at(-1);
  if (last === undefined) throw new UsageError(`compare: ${side} ${file} holds no pct or round line`);
  if (runs.length > 1) log.warn(`compare: ${file} holds ${runs.length} runs; comparing its last (run_id ${last.runId ?? "none"})`);
  return last.lines;
}
