/**
 * The history database as the commands use it (docs/guides/history.md): its --db path, adding files (`history add`),
 * and `run --history` (opened before anything is sent, the finished run added at its end).
 */
import type { Database } from "bun:sqlite";
import { UsageError } from "../errors.ts";
import { log } from "../log.ts";
import type { RawFlags } from "../config/flag-values.ts";
import { fileRuns, type CompareLine } from "../compare/lines.ts";
import { openHistory } from "../history/db.ts";
import { historyRun } from "../history/runs.ts";
import { addRun, storedRun } from "../history/store.ts";
import { formatJsonl, parseJsonlLine } from "../report/jsonl.ts";

import { HISTORY_DB_DEFAULT } from "../config/flags/results.ts";

/** The --db flag of history and compare. */
export const historyDbPath = (raw: RawFlags): string => (typeof raw.db === "string" && raw.db !== "" ? raw.db : HISTORY_DB_DEFAULT);

/** A string flag's value; null when absent. */
export const str = (raw: RawFlags, flag: string): string | null => (typeof raw[flag] === "string" ? (raw[flag] as string) : null);

/**
 * Adds every run of each file (read and checked before the database is opened, so a bad file adds nothing).
 * Lines without a run_id are stored under an id derived from the file's content.
 */
export function addFiles(db: Database, files: readonly string[], tag: string | null): number {
  const runs = files.flatMap((file) => fileRuns(file, "history add").map((r, i) => ({ file, run: historyRun(r.runId, r.lines, contentId(r.lines, i)) })));
  if (runs.length === 0) throw new UsageError(`history add: ${files.join(", ")} hold(s) no pct or round line`);
  let added = 0;
  for (const { file, run } of runs) {
    if (addRun(db, run, tag, file)) added++;
    else log.warn(`history add: run ${run.runId} of ${file} is already in the history; skipped`);
    if (run.rejectedBecause !== null) log.warn(`history add: run ${run.runId} of ${file} is stored rejected, never a baseline: ${run.rejectedBecause}`);
  }
  return added;
}

const contentId = (lines: readonly CompareLine[], i: number): string =>
  `sha-${new Bun.CryptoHasher("sha256").update(JSON.stringify(lines)).update(String(i)).digest("hex").slice(0, 12)}`;

/**
 * `run --history`: the database is opened (created, or proven ours) before anything is sent, so a bad --db fails
 * the run with exit 2 up front. Returns the path the run goes to at its end, or null without --history.
 */
export function historyTarget(raw: RawFlags): string | null {
  if (raw.history !== true) {
    if (typeof raw.db === "string") throw new UsageError("--db: names the history database of --history; add --history to store this run");
    return null;
  }
  const path = historyDbPath(raw);
  openHistory(path, true).close();
  return path;
}

/**
 * `run --history`, at the run's end: its lines, exactly as the JSONL has them. An interrupted run adds nothing (its
 * lines are partial); `history add FILE` of its --output-file stores it when asked.
 */
export function addFinishedRun(path: string, records: readonly object[], interrupted: boolean, outputFile: string | null): void {
  if (records.length === 0) return;
  if (interrupted) {
    log.warn(
      `--history: the run was interrupted, so it is not added to ${path}${outputFile ? ` (warmbench history add ${outputFile} --db ${path} adds it)` : ""}`,
    );
    return;
  }
  const lines = records.map((r) => parseJsonlLine(formatJsonl(r)) as CompareLine);
  const run = historyRun(
    typeof (lines[0] as { run_id?: unknown }).run_id === "string" ? (lines[0] as { run_id: string }).run_id : null,
    lines,
    contentId(lines, 0),
  );
  const db = openHistory(path, true);
  try {
    addRun(db, run, null, outputFile ?? "run --history");
    const status = storedRun(db, run.runId);
    log.info(`--history: run ${run.runId} added to ${path} (${status?.status ?? "?"}: ${status?.status_reason ?? ""})`);
  } finally {
    db.close();
  }
}
