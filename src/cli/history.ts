/**
 * `warmbench history add FILES... [--tag TAG]`, `history list [--tag TAG]`, `history show [METRIC] [--pct P]`,
 * `history promote RUN_ID`: runs kept in one SQLite file (--db, default ./warmbench.db; docs/guides/history.md), for
 * `compare history:last-green`.
 */
import { EXIT, UsageError } from "../errors.ts";
import { log } from "../log.ts";
import { openHistory } from "../history/db.ts";
import { KEY_METRICS } from "../history/runs.ts";
import { listRuns, setStatus, storedRun } from "../history/store.ts";
import { renderRunList, renderTrend } from "../history/tables.ts";
import { type ParsedFlags, write } from "./command.ts";
import { addFiles, historyDbPath, str } from "./history-db.ts";

export async function historyCommand(raw: ParsedFlags): Promise<number> {
  const [action, ...rest] = raw._;
  const path = historyDbPath(raw);
  const tag = str(raw, "tag");
  if (action === "add") {
    if (rest.length === 0) throw new UsageError("history add: expects one or more JSONL results files");
    const db = openHistory(path, true);
    try {
      const added = addFiles(db, rest, tag);
      log.info(`history: ${added} run(s) added to ${path}`);
    } finally {
      db.close();
    }
    return EXIT.ok;
  }
  if (action === "list" || action === "show") {
    if (action === "list" && rest.length > 0) throw new UsageError(`history list: unexpected argument "${rest[0]}"`);
    if (action === "show" && rest.length > 1) throw new UsageError(`history show: expects at most one METRIC, got ${rest.join(" ")}`);
    const metric = rest[0] ?? "p99_ttft_ms";
    if (!(KEY_METRICS as readonly string[]).includes(metric)) {
      throw new UsageError(`history show: ${metric} is not a stored metric (one of: ${KEY_METRICS.join(", ")})`);
    }
    const pctText = str(raw, "pct");
    const pct = pctText === null ? null : Number(pctText);
    if (pct !== null && (!Number.isFinite(pct) || pctText!.trim() === "")) throw new UsageError(`--pct "${pctText}": expected a number`);
    const db = openHistory(path, false);
    try {
      const runs = listRuns(db, tag);
      write(action === "list" ? renderRunList(runs) : renderTrend(db, runs, metric, pct));
    } finally {
      db.close();
    }
    return EXIT.ok;
  }
  if (action === "promote") {
    // Accepting a run as a baseline on purpose (a known, intended change of performance), said in its reason.
    if (rest.length !== 1) throw new UsageError("history promote: expects one RUN_ID (history list shows them)");
    const db = openHistory(path, true);
    try {
      const run = storedRun(db, rest[0]!);
      if (run === null) throw new UsageError(`history promote: no run ${rest[0]} in ${path}`);
      setStatus(db, run.run_id, "accepted", `promoted by hand (was ${run.status}: ${run.status_reason})`);
      log.info(`history: run ${run.run_id} accepted as a baseline (was ${run.status})`);
    } finally {
      db.close();
    }
    return EXIT.ok;
  }
  throw new UsageError(`history: expects add FILES..., list, show [METRIC] or promote RUN_ID (got ${action === undefined ? "nothing" : `"${action}"`})`);
}
