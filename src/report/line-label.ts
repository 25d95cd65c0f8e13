/** How the sweep table, the gate table and compare name a line: its pct, then its cell where the run set one. */

export interface LineCell {
  shared_prefix_pct: number;
  /** Absent in files written before --working-set. */
  working_set?: number;
  /** Infinity (or absent, in a line not ours) in a closed loop. */
  request_rate?: number;
  /** A trace replay's window (absent in its whole-trace line and in other lines). */
  window?: number;
}

/** A rate as it means something: 4 significant digits (a replay's trace rate is 18.17 req/s, not 18.174383206869916). */
export const formatRate = (rate: number): string => String(Number(rate.toPrecision(4)));

/** "50%", "50% ws=4", "50% @ 8 req/s": the working set and the request rate only where they are not the script's. */
export function lineLabel(l: LineCell): string {
  const ws = typeof l.working_set === "number" && l.working_set > 1 ? ` ws=${l.working_set}` : "";
  const rate = typeof l.request_rate === "number" && Number.isFinite(l.request_rate) ? ` @ ${formatRate(l.request_rate)} req/s` : "";
  return `${l.shared_prefix_pct}%${ws}${rate}`;
}

/** A line among its run's in a table: its pct, and a replay's window ("55% window 0"; "whole trace" for the whole). */
export function pointLabel(l: LineCell & { block_size?: number }): string {
  if (typeof l.window === "number") return `${l.shared_prefix_pct}% window ${l.window}`;
  return typeof l.block_size === "number" ? `${l.shared_prefix_pct}% whole trace` : `${l.shared_prefix_pct}%`;
}
