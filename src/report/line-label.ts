/** How the sweep table, the gate table and compare name a line: its pct, then its cell where the run set one. */

export interface LineCell {
  shared_prefix_pct: number;
  /** Absent in files written before --working-set. */
  working_set?: number;
  /** Infinity (or absent, in a line not ours) in a closed loop. */
  request_rate?: number;
}

/** "50%", "50% ws=4", "50% @ 8 req/s": the working set and the request rate only where they are not the script's. */
export function lineLabel(l: LineCell): string {
  const ws = typeof l.working_set === "number" && l.working_set > 1 ? ` ws=${l.working_set}` : "";
  const rate = typeof l.request_rate === "number" && Number.isFinite(l.request_rate) ? ` @ ${l.request_rate} req/s` : "";
  return `${l.shared_prefix_pct}%${ws}${rate}`;
}
