/**
 * The Point model: one line type for every measured unit. A point is a sweep line (axes: shared_prefix_pct,
 * working_set, request_rate) or a multi-turn round line (axes: round, working_set); both carry the same metrics where
 * they measure the same thing, and the same provenance. Which keys each kind carries, in which order (the order they
 * are written in, byte for byte), is listed here; what each key is lives in keys.ts.
 */
import { KEYS, type KeyName } from "./key-table.ts";
import type { TypeOf } from "./shape.ts";

/** Bumped when a key changes meaning (adding a key does not). */
export const SCHEMA_VERSION = 2;

export type LineKind = "sweep" | "round" | "capacity";

/** The script's keys, in its order (maybe_write_summary_jsonl): a sweep line starts with them, a drop-in for its files. */
export const SCRIPT_KEYS = [
  "backend",
  "dataset_name",
  "request_rate",
  "max_concurrency",
  "shared_prefix_pct",
  "prefix_len",
  "suffix_len",
  "total_tokens",
  "num_prompts",
  "output_len",
  "completed",
  "benchmark_duration",
  "total_input",
  "total_output",
  "total_output_retokenized",
  "request_throughput",
  "input_throughput",
  "output_throughput",
  "output_throughput_retokenized",
  "total_throughput",
  "total_throughput_retokenized",
  "mean_ttft_ms",
  "median_ttft_ms",
  "std_ttft_ms",
  "p90_ttft_ms",
  "p99_ttft_ms",
  "mean_tpot_ms",
  "median_tpot_ms",
  "std_tpot_ms",
  "p90_tpot_ms",
  "p99_tpot_ms",
  "mean_itl_ms",
  "median_itl_ms",
  "std_itl_ms",
  "p90_itl_ms",
  "p99_itl_ms",
  "mean_e2e_latency_ms",
  "median_e2e_latency_ms",
  "std_e2e_latency_ms",
  "p99_e2e_latency_ms",
  "concurrency",
] as const satisfies readonly KeyName[];

/** The keys only a trace replay's lines carry (optional in sweep lines). */
export const REPLAY_KEYS = [
  "block_size",
  "time_scale",
  "infinite_hit_ratio",
  "predicted_eviction_tokens",
  "observed_shortfall_tokens",
  "cache_short_requests",
  "cache_over_requests",
  "ttft_by_cached_fraction",
] as const satisfies readonly KeyName[];

/** The keys of the cache-fidelity check (--check-fidelity): in a sweep line only when it ran. */
export const FIDELITY_KEYS = [
  "fidelity_checked",
  "fidelity_identical",
  "fidelity_near_tie",
  "fidelity_diverged",
  "fidelity_unclassified",
  "fidelity_unproven",
  "fidelity_first_divergence",
  "fidelity_max_gap_nats",
  "fidelity_note",
] as const satisfies readonly KeyName[];

/** The keys of a line served by several replicas (--base-url A,B,...): the routing and the hit-loss ledger. */
export const REPLICA_KEYS = [
  "route",
  "replicas",
  "routing_imbalance",
  "ledger_requests",
  "ledger_unattributed_requests",
  "ledger_available_tokens",
  "ledger_on_replica_tokens",
  "ledger_modelled_tokens",
  "ledger_delivered_tokens",
  "loss_routing_tokens",
  "loss_eviction_tokens",
  "loss_engine_tokens",
  "loss_routing_ratio",
  "loss_eviction_ratio",
  "loss_engine_ratio",
] as const satisfies readonly KeyName[];

/** A sweep line's keys after the script's, in the order written. */
export const OWN_KEYS = [
  "run_id",
  "run",
  "gates",
  "workload",
  "repeat",
  "probe",
  "window",
  "sent",
  "failed",
  "errors",
  "errors_by_kind",
  "interrupted",
  "evidence",
  "burstiness",
  "duration_limit_s",
  "achieved_request_rate",
  "ttft_from_intended_mean_ms",
  "ttft_from_intended_median_ms",
  "ttft_from_intended_p90_ms",
  "ttft_from_intended_p99_ms",
  "e2e_from_intended_mean_ms",
  "e2e_from_intended_median_ms",
  "e2e_from_intended_p90_ms",
  "e2e_from_intended_p99_ms",
  "schedule_lag_mean_ms",
  "schedule_lag_median_ms",
  "schedule_lag_p90_ms",
  "schedule_lag_p99_ms",
  "page_size",
  "expected_cached_tokens",
  "mean_cached_tokens",
  "min_cached_tokens",
  "max_cached_tokens",
  "cached_tokens_mismatched",
  "cached_tokens_counts",
  "expected_hit_ratio",
  "observed_hit_ratio",
  "server_cache_hit_rate",
  "working_set",
  "working_set_tokens",
  "cache_capacity_tokens",
  "host_cache_capacity_tokens",
  "working_set_fits",
  "cache_shortfall_requests",
  "eviction",
  "cached_tokens_by_tier",
  "ttft_by_tier",
  "block_size",
  "time_scale",
  "infinite_hit_ratio",
  "predicted_eviction_tokens",
  "observed_shortfall_tokens",
  "cache_short_requests",
  "cache_over_requests",
  "ttft_by_cached_fraction",
  ...REPLICA_KEYS,
  ...FIDELITY_KEYS,
  "cache_check",
  "flushed",
  "flush_attempts",
  "flush_verified",
  "flush_probe_cached_tokens",
  "warm_verified",
  "warm_cached_tokens",
  "client_loop_lag_p99_ms",
  "client_loop_lag_max_ms",
  "client_own_lag_p99_ms",
  "client_js_cpu_pct",
  "client_http_cpu_pct",
  "client_cpu_pct",
  "client_saturated",
  "shards",
  "ttft_fit",
  "ttft_model",
  "steady_state",
  "timeline",
  "hdr",
  "hdr_unit",
  "warmbench_version",
  "schema_version",
  "started_at",
  "model",
  "tokenizer",
  "population_size",
  "seed",
  "base_url",
  "server_version",
  "text_mode",
  "prompt_encoding",
  "prompt_drift",
  "merged",
] as const satisfies readonly KeyName[];

export const SWEEP_KEYS = [...SCRIPT_KEYS, ...OWN_KEYS] as const;

/** A round line's keys in the order written. */
export const ROUND_KEYS = [
  "type",
  "run_id",
  "run",
  "gates",
  "round",
  "num_rounds",
  "num_clients",
  "clients_in_round",
  "backend",
  "max_concurrency",
  "round_barrier",
  "ready_queue_policy",
  "shared_system_tokens",
  "first_turn_tokens",
  "turn_tokens",
  "output_len",
  "working_set",
  "sent",
  "completed",
  "failed",
  "errors",
  "errors_by_kind",
  "interrupted",
  "evidence",
  "benchmark_duration",
  "total_input",
  "total_output",
  "total_output_retokenized",
  "request_throughput",
  "input_throughput",
  "output_throughput",
  "output_throughput_retokenized",
  "total_throughput",
  "total_throughput_retokenized",
  "mean_ttft_ms",
  "median_ttft_ms",
  "std_ttft_ms",
  "p90_ttft_ms",
  "p99_ttft_ms",
  "mean_tpot_ms",
  "median_tpot_ms",
  "std_tpot_ms",
  "p90_tpot_ms",
  "p99_tpot_ms",
  "mean_itl_ms",
  "median_itl_ms",
  "std_itl_ms",
  "p90_itl_ms",
  "p99_itl_ms",
  "mean_e2e_latency_ms",
  "median_e2e_latency_ms",
  "std_e2e_latency_ms",
  "p99_e2e_latency_ms",
  "concurrency",
  "mean_prompt_len",
  "max_prompt_len",
  "page_size",
  "expected_cached_tokens",
  "observed_cached_tokens",
  "expected_hit_ratio",
  "observed_hit_ratio",
  "server_cache_hit_rate",
  "working_set_tokens",
  "cache_capacity_tokens",
  "host_cache_capacity_tokens",
  "working_set_fits",
  "cache_shortfall_requests",
  "eviction",
  "cached_tokens_mismatched",
  "approximate_turns",
  "cached_tokens_by_tier",
  "ttft_by_tier",
  ...REPLICA_KEYS,
  ...FIDELITY_KEYS,
  "cache_check",
  "flush_verified",
  "warm_cached_tokens",
  "client_loop_lag_p99_ms",
  "client_loop_lag_max_ms",
  "client_own_lag_p99_ms",
  "client_js_cpu_pct",
  "client_http_cpu_pct",
  "client_cpu_pct",
  "client_saturated",
  "shards",
  "steady_state",
  "timeline",
  "hdr",
  "hdr_unit",
  "warmbench_version",
  "schema_version",
  "started_at",
  "model",
  "tokenizer",
  "population_size",
  "seed",
  "base_url",
  "server_version",
  "text_mode",
  "merged",
] as const satisfies readonly KeyName[];

/** A capacity line's keys (warmbench capacity: one per pct, after its probes, which are sweep lines with a `probe`). */
export const CAPACITY_KEYS = [
  "type",
  "run_id",
  "shared_prefix_pct",
  "working_set",
  "search",
  "capacity_request_rate",
  "capacity_concurrency",
  "capacity_bracket",
  "binding_gate",
  "capacity_status",
  "capacity_reason",
  "probes_counted",
  "probes_sent",
  "search_wall_s",
  "precision",
  "confirm",
  "backend",
  "total_tokens",
  "output_len",
  "burstiness",
  "warmbench_version",
  "schema_version",
  "started_at",
  "model",
  "seed",
  "base_url",
  "server_version",
] as const satisfies readonly KeyName[];

/**
 * Keys a line of the kind may leave out: `run` is in a run's first line only, `merged` in merge's lines only, and
 * `repeat`, `probe`, `window` in the lines of the producers that add those axes only, `evidence` in lines written
 * since schema_version 2 (and in a merge of such lines).
 */
export const OPTIONAL_KEYS = {
  sweep: ["run", "repeat", "probe", "window", "merged", "evidence", ...REPLAY_KEYS, ...REPLICA_KEYS, ...FIDELITY_KEYS],
  round: ["run", "merged", "evidence", ...REPLICA_KEYS, ...FIDELITY_KEYS],
  capacity: [],
} as const satisfies Record<LineKind, readonly KeyName[]>;

export const KEYS_OF = { sweep: SWEEP_KEYS, round: ROUND_KEYS, capacity: CAPACITY_KEYS } as const satisfies Record<LineKind, readonly KeyName[]>;

type Keys = typeof KEYS;
/** The value of key N in a line of kind K (a round line's own shape where it has one). */
type ValueIn<K extends LineKind, N extends KeyName> = K extends "round"
  ? Keys[N] extends { roundShape: infer R }
    ? TypeOf<R>
    : TypeOf<Keys[N]["shape"]>
  : TypeOf<Keys[N]["shape"]>;
type Flat<T> = { [P in keyof T]: T[P] };
type LineOf<K extends LineKind> = Flat<
  { [N in (typeof KEYS_OF)[K][number] as N extends (typeof OPTIONAL_KEYS)[K][number] ? never : N]: ValueIn<K, N> } & {
    [N in (typeof KEYS_OF)[K][number] as N extends (typeof OPTIONAL_KEYS)[K][number] ? N : never]?: ValueIn<K, N>;
  }
>;

/** A sweep line: a (pct, working set, request rate) cell of a sweep. */
export type SweepRecord = LineOf<"sweep">;
/** A multi-turn round line. */
export type RoundRecord = LineOf<"round">;
/** A capacity search's result for one pct (not a measured point: its probes are). */
export type CapacityRecord = LineOf<"capacity">;
/** A capacity line as read from a file: what compare pairs by pct and the report charts. */
export type CapacityLine = Partial<CapacityRecord> & { type: "capacity"; shared_prefix_pct: number };
/** Any measured point. */
export type Point = SweepRecord | RoundRecord;
/** What every point carries, whatever its kind (the keys both kinds write, as each kind types them). */
export type PointLine = Pick<SweepRecord, Extract<keyof SweepRecord, keyof RoundRecord>> | Pick<RoundRecord, Extract<keyof SweepRecord, keyof RoundRecord>>;

/** Keys of a kind whose value is a number (or null where it could not be measured): what a gate or a limit may name. */
export type NumericKeyOf<L> = { [N in keyof L]-?: [L[N]] extends [number | null] ? N : never }[keyof L];

/** The numeric keys of a kind, in line order. */
export const numericKeysOf = (kind: LineKind): KeyName[] =>
  KEYS_OF[kind].filter((name) => {
    const def = KEYS[name] as { shape: { numeric: boolean }; roundShape?: { numeric: boolean } };
    return (kind === "round" && def.roundShape ? def.roundShape : def.shape).numeric;
  });

/** Which kinds carry a key. */
export const kindsOf = (name: KeyName): LineKind[] =>
  (["sweep", "round", "capacity"] as const).filter((kind) => (KEYS_OF[kind] as readonly string[]).includes(name));

/** The line with its keys in its kind's order, schema_version set (absent optional keys skipped). */
export function orderLine(kind: LineKind, fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of KEYS_OF[kind]) {
    const value = key === "schema_version" ? SCHEMA_VERSION : fields[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}
