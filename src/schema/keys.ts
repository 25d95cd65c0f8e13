/** Key lists of the JSONL lines: pure data, imported by every layer that names keys (gates, compare limits). */

/**
 * Every numeric key of a pct line, in line order: what a gate or a --max-regress limit may name. The record's type
 * (src/metrics/pct-record.ts) proves each listed key is numeric; the schema test proves none is missing.
 */
export const NUMERIC_KEYS = [
  "request_rate", "max_concurrency", "shared_prefix_pct", "prefix_len", "suffix_len", "total_tokens", "num_prompts",
  "output_len", "completed", "benchmark_duration", "total_input", "total_output", "total_output_retokenized",
  "request_throughput", "input_throughput", "output_throughput", "output_throughput_retokenized", "total_throughput",
  "total_throughput_retokenized", "mean_ttft_ms", "median_ttft_ms", "std_ttft_ms", "p90_ttft_ms", "p99_ttft_ms",
  "mean_tpot_ms", "median_tpot_ms", "std_tpot_ms", "p90_tpot_ms", "p99_tpot_ms", "mean_itl_ms", "median_itl_ms",
  "std_itl_ms", "p90_itl_ms", "p99_itl_ms", "mean_e2e_latency_ms", "median_e2e_latency_ms", "std_e2e_latency_ms",
  "p99_e2e_latency_ms", "concurrency",
  "sent", "failed", "burstiness", "duration_limit_s", "achieved_request_rate",
  "ttft_from_intended_mean_ms", "ttft_from_intended_median_ms", "ttft_from_intended_p90_ms", "ttft_from_intended_p99_ms",
  "e2e_from_intended_mean_ms", "e2e_from_intended_median_ms", "e2e_from_intended_p90_ms", "e2e_from_intended_p99_ms",
  "schedule_lag_mean_ms", "schedule_lag_median_ms", "schedule_lag_p90_ms", "schedule_lag_p99_ms",
  "page_size", "expected_cached_tokens", "mean_cached_tokens", "min_cached_tokens", "max_cached_tokens",
  "cached_tokens_mismatched", "expected_hit_ratio", "observed_hit_ratio", "server_cache_hit_rate", "working_set",
  "working_set_tokens", "cache_capacity_tokens", "host_cache_capacity_tokens", "cache_shortfall_requests", "flush_attempts",
  "flush_probe_cached_tokens", "warm_cached_tokens", "client_loop_lag_p99_ms", "client_loop_lag_max_ms", "client_own_lag_p99_ms", "client_js_cpu_pct",
  "client_http_cpu_pct", "client_cpu_pct", "population_size",
] as const;

export type NumericPctKey = (typeof NUMERIC_KEYS)[number];

/** Whether `name` is a numeric key of a pct line. */
export const isNumericKey = (name: string): name is NumericPctKey => (NUMERIC_KEYS as readonly string[]).includes(name);
