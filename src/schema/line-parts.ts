/** Parts of a line written by layers above metrics (merge, the shards), typed here so the record needs none of them. */

/** What a merged line adds: where it came from, and which numbers are histogram-derived. */
export interface MergedFrom {
  files: string[];
  run_ids: (string | null)[];
  histogram_derived: string[];
}

/** One shard's line in the pct record. */
export interface ShardRow {
  rank: number;
  host: string;
  pid: number;
  sent: number;
  failed: number;
  clock_offset_ms: number;
  clock_rtt_ms: number;
  loop_lag_p99_ms: number;
  own_lag_p99_ms: number;
  js_cpu_pct: number;
  saturated: boolean;
}

/** What the pct record says about the shards: how many ran, where, and which failed. */
export interface ShardsReport {
  count: number;
  launcher: "local" | "slurm" | "flag";
  ranks: ShardRow[];
  /** One line per shard that disconnected, hung or failed during the pct. */
  failed: string[];
}
