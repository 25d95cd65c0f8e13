/**
 * Writing runs into the history and reading them back. Each run lands in one IMMEDIATE transaction (its row and all
 * its lines, or nothing); a run already stored (same run_id) is skipped, so re-adding a file is harmless.
 */
import type { Database } from "bun:sqlite";
import { UsageError } from "../errors.ts";
import { field, type CompareLine } from "../compare/lines.ts";
import { parseJsonlLine, formatJsonl } from "../report/jsonl.ts";
import { axesOf, isRoundAxes, labelOf } from "../schema/axes.ts";
import { KEY_METRICS, metricValue, runFingerprint, type HistoryRun } from "./runs.ts";

/** A run's row, as `history list` and the baseline lookup read it. */
export interface StoredRun {
  run_id: string;
  started_at: string;
  added_at: string;
  tag: string | null;
  fingerprint: string;
  kind: string;
  line_count: number;
  gate_count: number;
  gates_failed: number;
  interrupted: number;
  green: number;
  source: string;
  /** Whether the run may be a baseline: accepted, pending (not yet compared) or rejected; status_reason says why. */
  status: RunStatus;
  status_reason: string;
}

export type RunStatus = "accepted" | "pending" | "rejected";

const finiteOrNull = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/**
 * The status a run is stored with: rejected when its own evidence fails it, accepted when it is the first of its
 * workload (it bootstraps), else pending until a compare against the baseline accepts or rejects it.
 */
function initialStatus(db: Database, run: HistoryRun): { status: RunStatus; reason: string } {
  if (run.rejectedBecause !== null) return { status: "rejected", reason: run.rejectedBecause };
  const accepted = db.query("SELECT run_id FROM runs WHERE fingerprint = ? AND status = 'accepted' LIMIT 1").get(run.fingerprint);
  if (accepted === null) return { status: "accepted", reason: "the first of its workload: bootstraps the baseline" };
  return { status: "pending", reason: "not yet compared: compare history:last-green NEW accepts or rejects it" };
}

/** Sets a stored run's status; false when no run has that id. */
export function setStatus(db: Database, runId: string, status: RunStatus, reason: string): boolean {
  return db.query("UPDATE runs SET status = ?, status_reason = ? WHERE run_id = ?").run(status, reason, runId).changes > 0;
}

/** A stored run by id, or null. */
export const storedRun = (db: Database, runId: string): StoredRun | null => db.query("SELECT * FROM runs WHERE run_id = ?").get(runId) as StoredRun | null;

/** Stores `run`; false when a run with its id is already there (nothing written). */
export function addRun(db: Database, run: HistoryRun, tag: string | null, source: string): boolean {
  const insertRun = db.query(
    `INSERT OR IGNORE INTO runs (run_id, started_at, added_at, tag, fingerprint, kind, line_count, gate_count, gates_failed, interrupted, green, source, status, status_reason)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertLine = db.query(
    `INSERT INTO lines (run_id, seq, label, shared_prefix_pct, working_set, request_rate, round, repeat, ${KEY_METRICS.join(", ")}, failed, line)
     VALUES (${Array.from({ length: 10 + KEY_METRICS.length }, () => "?").join(", ")})`,
  );
  const tx = db.transaction(() => {
    const { status, reason } = initialStatus(db, run);
    const r = insertRun.run(
      run.runId,
      run.startedAt,
      new Date().toISOString(),
      tag,
      run.fingerprint,
      run.kind,
      run.lines.length,
      run.gateCount,
      run.gatesFailed,
      run.interrupted ? 1 : 0,
      run.green ? 1 : 0,
      source,
      status,
      reason,
    );
    if (r.changes === 0) return false;
    run.lines.forEach((line, seq) => {
      const axes = axesOf(line);
      const sweep = isRoundAxes(axes) ? null : axes;
      insertLine.run(
        run.runId,
        seq,
        labelOf(line),
        sweep?.shared_prefix_pct ?? null,
        sweep?.working_set ?? null,
        // A closed loop (rate inf) is NULL: SQLite's REAL has no portable infinity.
        sweep && Number.isFinite(sweep.request_rate) ? sweep.request_rate : null,
        isRoundAxes(axes) ? axes.round : null,
        finiteOrNull(field(line, "repeat")),
        ...KEY_METRICS.map((m) => metricValue(line, m)),
        finiteOrNull(field(line, "failed")),
        formatJsonl(line).trimEnd(),
      );
    });
    return true;
  });
  return tx.immediate() as boolean;
}

/** Every stored run, oldest first (by started_at, then by when it was added). */
export const listRuns = (db: Database, tag: string | null = null): StoredRun[] =>
  (tag === null
    ? db.query("SELECT * FROM runs ORDER BY started_at, added_at").all()
    : db.query("SELECT * FROM runs WHERE tag = ? ORDER BY started_at, added_at").all(tag)) as StoredRun[];

/** A stored run's lines, in the order they were written. */
export function runLines(db: Database, runId: string): CompareLine[] {
  const rows = db.query("SELECT line FROM lines WHERE run_id = ? ORDER BY seq").all(runId) as { line: string }[];
  return rows.map((r) => parseJsonlLine(r.line) as CompareLine);
}

/**
 * NEW itself when the history holds it as the only accepted run of its workload: the first run of a workload
 * bootstraps the baseline, so `compare history:last-green` of it has nothing to judge it against and says so
 * (exit 0) instead of failing the first CI job of a new database. Null otherwise.
 */
export function bootstrapRun(db: Database, next: readonly CompareLine[]): StoredRun | null {
  const newId = field(next[0]!, "run_id");
  if (typeof newId !== "string") return null;
  const run = storedRun(db, newId);
  if (run === null || run.status !== "accepted") return null;
  const others = db.query("SELECT count(*) AS n FROM runs WHERE fingerprint = ? AND status = 'accepted' AND run_id != ?").get(run.fingerprint, newId) as {
    n: number;
  };
  return others.n === 0 && run.fingerprint === runFingerprint(next) ? run : null;
}

/** The run a baseline spec names, or a UsageError saying why none is there. */
function pickRun(db: Database, spec: string, newest: string, fingerprint: string, newRunId: string | null): StoredRun {
  const others = (rows: StoredRun[]) => rows.filter((r) => r.run_id !== newRunId);
  const newestFirst = "ORDER BY started_at DESC, added_at DESC";
  if (spec === "last-green" || spec === "last-accepted") {
    // The evidence check's baseline_not_accepted: green is not enough, a baseline is a run that was accepted.
    const [run] = others(db.query(`SELECT * FROM runs WHERE fingerprint = ? AND status = 'accepted' ${newestFirst}`).all(fingerprint) as StoredRun[]);
    if (run) return run;
    throw new UsageError(
      `compare: history:${spec}: no accepted run of NEW's workload (fingerprint ${fingerprint}) in the history${newest} (history list shows each run's status; history promote RUN accepts one)`,
    );
  }
  const byId = db.query("SELECT * FROM runs WHERE run_id = ?").get(spec) as StoredRun | null;
  if (byId) return byId;
  const tagged = others(db.query(`SELECT * FROM runs WHERE tag = ? ${newestFirst}`).all(spec) as StoredRun[]);
  // A tag may hold runs of several workloads: the newest of NEW's own first.
  const run = tagged.find((r) => r.fingerprint === fingerprint) ?? tagged[0];
  if (run) return run;
  throw new UsageError(`compare: history:${spec}: no run with that id or tag in the history${newest}`);
}

/**
 * The baseline `history:SPEC` names for NEW: `last-green` (= `last-accepted`: the newest run with NEW's workload
 * fingerprint that was accepted as a baseline: see initialStatus), a run id, or a tag (its newest run, of NEW's workload where it has one).
 * NEW itself is never its own baseline (a run added with `run --history` before the compare).
 */
export function resolveBaseline(db: Database, spec: string, next: readonly CompareLine[], dbPath: string): { run: StoredRun; lines: CompareLine[] } {
  const fingerprint = runFingerprint(next);
  const newRunId = typeof field(next[0]!, "run_id") === "string" ? (field(next[0]!, "run_id") as string) : null;
  const run = pickRun(db, spec, ` (--db ${dbPath})`, fingerprint, newRunId);
  return { run, lines: runLines(db, run.run_id) };
}
