/** `history list` and `history show`: the stored runs, and one metric per line across them (a trend table). */
import type { Database } from "bun:sqlite";
import { formatCell, renderTextTable } from "../report/text-table.ts";
import type { StoredRun } from "./store.ts";

const gatesCell = (r: StoredRun): string =>
  r.gate_count === 0 ? "none" : r.gates_failed === 0 ? `${r.gate_count} pass` : `${r.gates_failed}/${r.gate_count} FAIL`;

/** One row per run, oldest first: id, when, tag, fingerprint, lines, gates, its status as a baseline and why. */
export function renderRunList(runs: readonly StoredRun[]): string {
  if (runs.length === 0) return "history: no runs stored\n";
  const rows = runs.map((r) => [r.run_id, r.started_at, r.tag ?? "-", r.fingerprint, r.kind, String(r.line_count), gatesCell(r), r.status, r.status_reason]);
  return renderTextTable(["run_id", "started_at", "tag", "fingerprint", "kind", "lines", "gates", "status", "why"], rows) + "\n";
}

/**
 * The trend of `metric`: one row per run (oldest first), one column per line label, the mean over a line's
 * repeats. `pct` keeps only the lines at that shared-prefix pct.
 */
export function renderTrend(db: Database, runs: readonly StoredRun[], metric: string, pct: number | null): string {
  const where = pct === null ? "" : " AND shared_prefix_pct = ?";
  const values = db.query(`SELECT label, avg(${metric}) AS v, min(seq) AS first FROM lines WHERE run_id = ?${where} GROUP BY label ORDER BY first`);
  const perRun = runs.map((r) => ({
    run: r,
    cells: new Map((values.all(...(pct === null ? [r.run_id] : [r.run_id, pct])) as { label: string; v: number | null }[]).map((c) => [c.label, c.v])),
  }));
  const labels = [...new Set(perRun.flatMap((p) => [...p.cells.keys()]))];
  if (labels.length === 0) return `history: no line${pct === null ? "" : ` at ${pct}%`} in the stored runs\n`;
  const rows = perRun
    .filter((p) => p.cells.size > 0)
    .map((p) => [p.run.started_at.slice(0, 19), p.run.run_id, p.run.tag ?? "-", ...labels.map((l) => formatCell(p.cells.get(l) ?? null))]);
  return `${metric} per line, oldest run first\n\n${renderTextTable(["started_at", "run_id", "tag", ...labels], rows)}\n`;
}
