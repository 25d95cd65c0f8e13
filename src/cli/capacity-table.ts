/** The capacity search's console report: one row per pct (capacity, bracket, binding gate, probes, time). */
import type { CapacityRecord } from "../schema/lines.ts";
import { formatCell, renderTextTable } from "../report/text-table.ts";

const cell = (v: number | null): string => (v === null ? "-" : formatCell(v));

export function renderCapacityTable(lines: readonly CapacityRecord[]): string {
  if (lines.length === 0) return "No capacity found (interrupted before the first search ended).";
  const unit = lines[0]!.search === "rate" ? "req/s" : "requests";
  const rows = lines.map((l) => {
    const capacity = l.search === "rate" ? l.capacity_request_rate : l.capacity_concurrency;
    const [lo, hi] = l.capacity_bracket;
    return [
      `${l.shared_prefix_pct}%`,
      l.capacity_status === "at_max" ? `>= ${cell(capacity)}` : cell(capacity),
      `[${cell(lo)}, ${cell(hi)}]`,
      l.binding_gate ?? "-",
      `${l.probes_counted}/${l.probes_sent}`,
      `${l.search_wall_s.toFixed(1)} s`,
      l.capacity_reason ?? "",
    ];
  });
  const table = renderTextTable(["pct", `capacity (${unit})`, "bracket [pass, fail]", "binding gate", "probes", "time", "note"], rows, [
    "right",
    "right",
    "left",
    "left",
    "right",
    "right",
    "left",
  ]);
  return `Capacity at the gates (probes: counted/sent; a probe whose cache check failed is not counted)\n${table}`;
}
