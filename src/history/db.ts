/**
 * The history database (docs/guides/history.md): one SQLite file opened with Bun's built-in `bun:sqlite`. Before
 * SQLite touches a file that exists, it is proven to be ours: the SQLite header, then our application_id, then a
 * schema version this build knows. Anything else (a results file given by mistake, another tool's database, a
 * truncated copy, a newer warmbench's schema) is refused with exit 2 and left byte for byte as it was.
 */
import { Database } from "bun:sqlite";
import { closeSync, existsSync, openSync, readSync, statSync } from "node:fs";
import { UsageError } from "../errors.ts";

/** "WBH1" in the header's application_id: what tells our file from any other SQLite database. */
export const APPLICATION_ID = 0x57424831;
/** PRAGMA user_version of the schema below; a database with a higher one was written by a newer warmbench. */
export const SCHEMA_VERSION = 2;
/** How long a writer waits for another's transaction (two `history add` at once both land). */
const BUSY_TIMEOUT_MS = 30_000;

/** The schema, version 1: a run per row, and its lines beside it with their axes and key metrics as columns. */
const SCHEMA_V1 = `
CREATE TABLE runs (
  run_id TEXT PRIMARY KEY,
  started_at TEXT NOT NULL,
  added_at TEXT NOT NULL,
  tag TEXT,
  fingerprint TEXT NOT NULL,
  kind TEXT NOT NULL,
  line_count INTEGER NOT NULL,
  gate_count INTEGER NOT NULL,
  gates_failed INTEGER NOT NULL,
  interrupted INTEGER NOT NULL,
  green INTEGER NOT NULL,
  source TEXT NOT NULL
);
CREATE INDEX runs_by_fingerprint ON runs (fingerprint, started_at);
CREATE INDEX runs_by_tag ON runs (tag, started_at);
CREATE TABLE lines (
  run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  label TEXT NOT NULL,
  shared_prefix_pct REAL,
  working_set INTEGER,
  request_rate REAL,
  round INTEGER,
  repeat INTEGER,
  mean_ttft_ms REAL,
  p99_ttft_ms REAL,
  mean_itl_ms REAL,
  p99_itl_ms REAL,
  p99_e2e_latency_ms REAL,
  output_throughput REAL,
  request_throughput REAL,
  failed INTEGER,
  line TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
);
CREATE INDEX lines_by_axes ON lines (shared_prefix_pct, working_set, request_rate, round);
`;

/**
 * Version 2 (0.4): a run is a baseline only once accepted. `status` is accepted (the first of its workload, a compare
 * against the baseline of its time that exited 0, or `history promote`), pending (green, not yet compared), or
 * rejected (interrupted, a gate failed, its load not sustained, or found regressed), with the reason beside it. A
 * version-1 history is migrated when opened for writing: its green runs accepted, the rest rejected, as 0.3 used them.
 */
const MIGRATE_V1_TO_V2 = `
ALTER TABLE runs ADD COLUMN status TEXT NOT NULL DEFAULT 'pending';
ALTER TABLE runs ADD COLUMN status_reason TEXT NOT NULL DEFAULT '';
UPDATE runs SET status = CASE WHEN green = 1 THEN 'accepted' ELSE 'rejected' END,
  status_reason = CASE WHEN green = 1 THEN 'green in a 0.3 history (migrated)' ELSE 'not green in a 0.3 history (migrated)' END;
`;

const SQLITE_MAGIC = "SQLite format 3\0";

/** Refuses (exit 2) a file that is not an SQLite database, before SQLite could write to it. */
function checkHeader(path: string): void {
  const size = statSync(path).size;
  if (size === 0) return; // an empty file is a new database (SQLite's own rule)
  const fd = openSync(path, "r");
  const head = Buffer.alloc(16);
  try {
    readSync(fd, head, 0, 16, 0);
  } finally {
    closeSync(fd);
  }
  if (head.toString("latin1") !== SQLITE_MAGIC) {
    throw new UsageError(`--db ${path}: not a warmbench history database (not SQLite at all); left untouched`);
  }
}

const pragma = (db: Database, name: string): number => Number((db.query(`PRAGMA ${name}`).get() as Record<string, unknown>)[name]);

/** Checks a database's identity and version; creates the schema in an empty one. Runs inside a write lock. */
function checkOrCreate(db: Database, path: string, write: boolean): void {
  const appId = pragma(db, "application_id");
  const version = pragma(db, "user_version");
  const tables = Number((db.query("SELECT count(*) AS n FROM sqlite_master").get() as { n: number }).n);
  if (appId === 0 && version === 0 && tables === 0) {
    if (!write) throw new UsageError(`--db ${path}: no history yet (warmbench history add FILES creates it)`);
    db.run(`PRAGMA application_id = ${APPLICATION_ID}`);
    db.exec(SCHEMA_V1);
    db.exec(MIGRATE_V1_TO_V2);
    db.run(`PRAGMA user_version = ${SCHEMA_VERSION}`);
    return;
  }
  if (appId !== APPLICATION_ID) throw new UsageError(`--db ${path}: an SQLite database of another program, not a warmbench history; left untouched`);
  if (version > SCHEMA_VERSION) {
    throw new UsageError(`--db ${path}: written by a newer warmbench (schema ${version}; this one knows up to ${SCHEMA_VERSION}); refused, left untouched`);
  }
  if (version < 1) throw new UsageError(`--db ${path}: a warmbench history without a schema version; left untouched`);
  checkTables(db, path, version);
  if (version === 1) {
    if (!write) throw new UsageError(`--db ${path}: a 0.3 history (schema 1); any command that writes it (history add, compare history:...) migrates it first`);
    db.exec(MIGRATE_V1_TO_V2);
    db.run(`PRAGMA user_version = ${SCHEMA_VERSION}`);
  }
}

/** The columns every query reads, per table, and the schema version that added each. */
const COLUMNS: Record<string, readonly (readonly [string, number])[]> = {
  runs: [
    ["run_id", 1],
    ["fingerprint", 1],
    ["started_at", 1],
    ["status", 2],
    ["status_reason", 2],
  ],
  lines: [
    ["run_id", 1],
    ["seq", 1],
    ["line", 1],
  ],
};

/**
 * A history whose tables were dropped or altered by hand (or by another tool) would fail in the middle of a query
 * with SQLite's words; it is refused up front, naming what is missing, and left untouched.
 */
function checkTables(db: Database, path: string, version: number): void {
  for (const [table, columns] of Object.entries(COLUMNS)) {
    const have = new Set((db.query(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name));
    if (have.size === 0) throw new UsageError(`--db ${path}: a damaged warmbench history: its table ${table} is missing; left untouched`);
    const missing = columns.filter(([name, since]) => since <= version && !have.has(name)).map(([name]) => name);
    if (missing.length > 0) {
      throw new UsageError(`--db ${path}: a damaged warmbench history: table ${table} lacks column(s) ${missing.join(", ")}; left untouched`);
    }
  }
}

/** SQLite's own "this is not a database" / "malformed" errors become the same refusal. */
function refuseCorrupt(path: string, err: unknown): never {
  if (err instanceof UsageError) throw err;
  const msg = (err as Error)?.message ?? String(err);
  throw new UsageError(`--db ${path}: not a readable warmbench history database (${msg}); left untouched`);
}

/**
 * Opens the history at `path`. `write`: create it when absent, and hold the write lock while the schema is
 * checked or created, so two processes creating it at once agree. Read-only opens refuse a missing file.
 */
export function openHistory(path: string, write: boolean): Database {
  const exists = existsSync(path);
  if (!exists && !write) throw new UsageError(`--db ${path}: no history yet (warmbench history add FILES creates it)`);
  if (exists) {
    if (!statSync(path).isFile()) throw new UsageError(`--db ${path}: not a file`);
    checkHeader(path);
  }
  let db: Database;
  try {
    db = new Database(path, write ? { create: true, readwrite: true } : { readonly: true });
  } catch (err) {
    refuseCorrupt(path, err);
  }
  try {
    db.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    if (write) {
      // The identity is checked under the write lock, before WAL mode changes the header: nothing is written to a
      // file that turned out not to be ours.
      db.run("BEGIN IMMEDIATE");
      try {
        checkOrCreate(db, path, true);
        db.run("COMMIT");
      } catch (err) {
        db.run("ROLLBACK");
        throw err;
      }
      db.run("PRAGMA journal_mode = WAL");
      db.run("PRAGMA foreign_keys = ON");
    } else {
      checkOrCreate(db, path, false);
    }
    return db;
  } catch (err) {
    db.close();
    refuseCorrupt(path, err);
  }
}
