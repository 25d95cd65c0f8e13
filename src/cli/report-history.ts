/**
 * `report --history [--db PATH] [--tag T]`: the runs of the history database, oldest first, as the report's trend
 * (src/report/history-trend.ts draws them; the report layer never opens the database). The files given beside it
 * are the newest points, drawn but not stored. The database is opened read-only.
 */
import { basename } from "node:path";
import { UsageError } from "../errors.ts";
import type { RawFlags } from "../config/flag-values.ts";
import { openHistory } from "../history/db.ts";
import { KEY_METRICS, metricValue } from "../history/runs.ts";
import { listRuns, runLines } from "../history/store.ts";
import type { CompareLine } from "../compare/lines.ts";
import { trendLabel, type HistoryTrend, type TrendRun } from "../report/history-trend.ts";
import type { ReportRun } from "../report/runs.ts";
import { historyDbPath, str } from "./history-db.ts";

/** --db and --tag belong to --history: without it they would do nothing, so they are refused. */
export function checkHistoryFlags(raw: RawFlags, writesReport: boolean): boolean {
  if (raw.history !== true) {
    for (const flag of ["db", "tag"]) {
      if (str(raw, flag) !== null) throw new UsageError(`report: --${flag} belongs to --history (the trend of a history database); add --history`);
    }
    return false;
  }
  if (!writesReport) throw new UsageError("report: --history draws its trend in the --html or --md report; add --html OUT.html or --md OUT.md");
  return true;
}

/** The file's runs, each once (a run split into cells by rate or working set is one run of the history). */
function fileTrendRuns(runs: readonly ReportRun[]): TrendRun[] {
  const seen = new Map<string, TrendRun>();
  for (const r of runs) {
    const key = `${r.file}\0${r.group?.index ?? r.runId}`;
    const lines = [...r.pcts, ...r.rounds];
    const prior = seen.get(key);
    if (prior) {
      seen.set(key, { ...prior, lines: [...prior.lines, ...lines] });
      continue;
    }
    const started = r.header?.started_at ?? (lines[0] as { started_at?: unknown } | undefined)?.started_at;
    seen.set(key, { runId: r.runId ?? basename(r.file), label: trendLabel(typeof started === "string" ? started : "", basename(r.file)), lines });
  }
  return [...seen.values()];
}

/** The stored runs (only --tag's, if given), oldest first, then the files' runs not stored yet as the newest points. */
export function loadHistoryTrend(raw: RawFlags, fileRuns: readonly ReportRun[]): HistoryTrend {
  const path = historyDbPath(raw);
  const tag = str(raw, "tag");
  const db = openHistory(path, false);
  let stored: TrendRun[];
  try {
    stored = listRuns(db, tag).map((r) => ({ runId: r.run_id, label: trendLabel(r.started_at, r.tag), lines: runLines(db, r.run_id) }));
  } finally {
    db.close();
  }
  if (stored.length === 0) throw new UsageError(`report --history: no run${tag === null ? "" : ` tagged ${tag}`} in --db ${path}`);
  // A file whose run is stored already is drawn once, where the history has it.
  const storedIds = new Set(stored.map((r) => r.runId));
  const newest = fileTrendRuns(fileRuns).filter((r) => !storedIds.has(r.runId));
  return { runs: [...stored, ...newest], metrics: KEY_METRICS, read: (line, metric) => metricValue(line as CompareLine, metric) };
}
