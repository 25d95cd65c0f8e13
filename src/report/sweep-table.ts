/**
 * The console's gate sections and the table printed after a sweep's last pct: pure, from pct lines alone, so
 * `warmbench report` prints them again byte for byte from the file.
 */
import type { GateResult } from "../schema/nested.ts";
import { formatCell, renderTextTable } from "./text-table.ts";
import { lineLabel, type LineCell } from "./line-label.ts";

/** What the sweep table reads from a pct line (any of ours; absent keys show as n/a). */
export interface SweepRow extends LineCell {
  mean_ttft_ms: number | null;
  p99_ttft_ms: number | null;
  p99_itl_ms: number | null;
  output_throughput: number;
  cache_check?: string;
  gates?: readonly GateResult[];
}

/** "pass" / "FAIL" as the console writes a verdict. */
export const verdictText = (pass: boolean): string => (pass ? "pass" : "FAIL");

/** The gates cell of a pct: "-" without gates, "2/2 pass", or "FAIL 1/2" (failed of all). */
export function gatesCell(gates: readonly GateResult[] | undefined): string {
  if (!gates || gates.length === 0) return "-";
  const failed = gates.filter((g) => !g.pass).length;
  return failed === 0 ? `${gates.length}/${gates.length} pass` : `FAIL ${failed}/${gates.length}`;
}

/** One row per line (its pct, and its working set and rate where set): TTFT mean/p99, ITL p99, output throughput, cache check, gates. */
function renderSweepTable(rows: readonly SweepRow[]): string {
  const columns = ["pct", "TTFT mean ms", "TTFT p99 ms", "ITL p99 ms", "output tok/s", "cache check", "gates"];
  const cells = rows.map((r) => [
    lineLabel(r),
    formatCell(r.mean_ttft_ms),
    formatCell(r.p99_ttft_ms),
    formatCell(r.p99_itl_ms),
    formatCell(r.output_throughput),
    r.cache_check ?? "n/a",
    gatesCell(r.gates),
  ]);
  return renderTextTable(columns, cells, ["right", "right", "right", "right", "right", "left", "left"]);
}

/** Every gate verdict of the sweep (gate, pct, value, verdict); "" when no line carries a gate. */
function renderGateTable(rows: readonly SweepRow[]): string {
  const cells: string[][] = [];
  // A verdict failed for want of evidence names what was missing (the defect), whatever the value.
  const verdict = (g: GateResult) => (g.evidence?.length ? `FAIL (${g.evidence.map((e) => e.split(":")[0]).join(", ")})` : verdictText(g.pass));
  for (const r of rows) for (const g of r.gates ?? []) cells.push([g.expr, lineLabel(r), formatCell(g.value), verdict(g)]);
  if (cells.length === 0) return "";
  return renderTextTable(["gate", "pct", "value", "verdict"], cells, ["left", "right", "right", "left"]);
}

/** The block after the last pct: the sweep table, then the gate table when there are gates. */
export function renderSweepSummary(rows: readonly SweepRow[]): string {
  const title = (t: string) => `${"-".repeat(Math.max(0, Math.floor((50 - t.length) / 2)))}${t}${"-".repeat(Math.max(0, Math.ceil((50 - t.length) / 2)))}`;
  const parts = [title("Sweep summary"), renderSweepTable(rows)];
  const gates = renderGateTable(rows);
  if (gates !== "") parts.push(title("Gates"), gates);
  return parts.join("\n");
}
