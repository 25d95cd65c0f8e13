/**
 * A measuring session: what a search (capacity) or any producer that measures points one at a time holds between
 * points. It is prepared once - tokenizer, backend, preflight (prepare.ts), the run id - and then measures one point
 * per call through the engine's stages (reset and prove the cache, warm, measure, summarizePoint), carrying the
 * state one point leaves for the next (the flush probe, the TTFT fit, whether the run's first line was written).
 * The producer that knows how to build a point's prompts implements it (the sweep's cell: src/sweep/session.ts);
 * the one that decides which points to measure (src/capacity) plans each as a SearchPoint (not the sweep's own LinePlan of sweep/plan.ts, which it builds from one) and takes the session as this
 * interface, so neither imports the other; the command line only opens the session and hands it over.
 */
import type { RunOptions } from "../config/options.ts";
import type { SweepLine } from "../metrics/sweep-line.ts";

/**
 * The plan of one line, as a producer that measures points one at a time hands it to a session: where it sits (a
 * pct, a working set, a search's probe), the options it is measured with (its one rate or concurrency, its request
 * count), and what live progress calls it.
 */
export interface SearchPoint {
  pct: number;
  workingSet: number;
  opts: RunOptions;
  /** Its place in a search (the line's `probe` axis). */
  probe?: number;
  /** Live progress's name for it. */
  label: string;
}

export interface PointSession<Point> {
  /** The run every point of the session belongs to: each line's run_id and its evidence's. */
  readonly runId: string;
  /** Measures one point: its line, summarized and judged, not yet written (the caller's sink writes it). */
  measure(point: Point): Promise<SweepLine>;
  /** Ends the session (the prompt worker, the shards): after the last point, and on every error. */
  close(): Promise<void>;
}

/**
 * A measured line that ends the run rather than being data: a shard that failed, or a point where every request
 * failed (the server is gone or refuses the workload). Null: the line is data.
 */
export function fatalLine(record: SweepLine): string | null {
  const failedShards = record.shards?.failed ?? [];
  if (failedShards.length > 0) return `${failedShards.join("; ")}: the pct was written with what the other shards measured (interrupted: true)`;
  if (!record.interrupted && record.completed === 0) return `All requests failed for shared_prefix=${record.shared_prefix_pct}%.`;
  return null;
}
