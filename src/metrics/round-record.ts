/**
 * The one typed record of a multi-turn round: what the console's round table prints and what the JSONL round line
 * holds, key for key in this order (test/fixtures/schema/round-line.json pins it). A round is the turn of every
 * client with that index (with --round-barrier they run together; without, they overlap with their neighbours).
 * Latency keys mean what they mean in a pct line (the same src/metrics code computes them); cache keys are sums over
 * the round's turns, so the lines chart directly: x = round, y = hit ratio, TTFT, tokens per tier.
 */
import type { CacheStatus } from "./cache-check.ts";
import type { CachedTokensByTier, TtftByTier } from "./cache-tiers.ts";
import type { Provenance, RunInfo } from "./pct-record.ts";
import type { RequestMetrics } from "./summarize.ts";
import type { CachePressure } from "./cache-pressure.ts";
import type { GateResult } from "../schema/gate.ts";
import type { ShardsReport } from "../schema/line-parts.ts";

/**
 * The cache-pressure fields are CachePressure's: working_set_tokens is what the cache must hold for every turn of the
 * round to hit (the system prompts and every history); a shortfall is a turn whose history should have been cached
 * and was not (below expected; below the exact part when approximate).
 */
export interface RoundRecord extends RequestMetrics, CachePressure, Provenance {
  type: "round";
  run_id: string;
  /** The run's description; in the run's first round line only. */
  run?: RunInfo;
  /** Every --gate, judged on this round's numbers; [] without gates. */
  gates: GateResult[];
  /** 0-based, as bench_multiturn.py's round_0, round_1, ... */
  round: number;
  num_rounds: number;
  num_clients: number;
  /** Turns this round was to have: the clients whose conversation was still going. */
  clients_in_round: number;
  backend: string;
  max_concurrency: number;
  round_barrier: boolean;
  ready_queue_policy: string;
  shared_system_tokens: number;
  first_turn_tokens: number;
  turn_tokens: number;
  output_len: number;
  working_set: number;
  /** Turns that ended (completed + failed; cancelled ones are not counted). */
  sent: number;
  interrupted: boolean;
  mean_prompt_len: number | null;
  max_prompt_len: number | null;
  page_size: number;
  /** Σ over completed turns of the cached tokens each should report (its history but the last output token, paged). */
  expected_cached_tokens: number;
  /** Σ of the cached tokens they reported; null when none did. */
  observed_cached_tokens: number | null;
  expected_hit_ratio: number | null;
  observed_hit_ratio: number | null;
  /** From the server's Prometheus counters over the round (with --round-barrier only; rounds overlap without). */
  server_cache_hit_rate: number | null;
  /** Turns whose reported cached tokens differ from expected (approximate turns: fall below their exact part). */
  cached_tokens_mismatched: number | null;
  /** Turns whose history holds an answer re-tokenized from text (a backend without output ids). */
  approximate_turns: number;
  cached_tokens_by_tier: CachedTokensByTier | null;
  ttft_by_tier: TtftByTier | null;
  cache_check: CacheStatus;
  flush_verified: boolean | null;
  /** Cached tokens the system-prompt warm requests found after the flush (0 proves it); null: no warm. */
  warm_cached_tokens: number | null;
  client_loop_lag_p99_ms: number;
  client_loop_lag_max_ms: number;
  client_js_cpu_pct: number;
  client_http_cpu_pct: number | null;
  client_cpu_pct: number;
  client_saturated: boolean;
  /** The processes whose turns this round unites (how many, where, their clocks and health, which failed); null in one process. */
  shards: ShardsReport | null;
}

/** Every key in the order written. */
export const ROUND_KEYS = [
  "type", "run_id", "run", "gates", "round", "num_rounds", "num_clients", "clients_in_round", "backend", "max_concurrency",
  "round_barrier", "ready_queue_policy", "shared_system_tokens", "first_turn_tokens", "turn_tokens", "output_len", "working_set",
  "sent", "completed", "failed", "errors", "errors_by_kind", "interrupted",
  "benchmark_duration", "total_input", "total_output", "total_output_retokenized", "request_throughput", "input_throughput",
  "output_throughput", "output_throughput_retokenized", "total_throughput", "total_throughput_retokenized",
  "mean_ttft_ms", "median_ttft_ms", "std_ttft_ms", "p90_ttft_ms", "p99_ttft_ms",
  "mean_tpot_ms", "median_tpot_ms", "std_tpot_ms", "p90_tpot_ms", "p99_tpot_ms",
  "mean_itl_ms", "median_itl_ms", "std_itl_ms", "p90_itl_ms", "p99_itl_ms",
  "mean_e2e_latency_ms", "median_e2e_latency_ms", "std_e2e_latency_ms", "p99_e2e_latency_ms", "concurrency",
  "mean_prompt_len", "max_prompt_len", "page_size", "expected_cached_tokens", "observed_cached_tokens",
  "expected_hit_ratio", "observed_hit_ratio", "server_cache_hit_rate",
  "working_set_tokens", "cache_capacity_tokens", "host_cache_capacity_tokens", "working_set_fits",
  "cache_shortfall_requests", "eviction", "cached_tokens_mismatched", "approximate_turns",
  "cached_tokens_by_tier", "ttft_by_tier", "cache_check", "flush_verified", "warm_cached_tokens",
  "client_loop_lag_p99_ms", "client_loop_lag_max_ms", "client_js_cpu_pct", "client_http_cpu_pct", "client_cpu_pct", "client_saturated", "shards",
  "hdr", "hdr_unit",
  "warmbench_version", "started_at", "model", "tokenizer", "population_size", "seed", "base_url", "server_version", "text_mode",
] as const satisfies ReadonlyArray<keyof RoundRecord>;

// Compile-time proof that ROUND_KEYS lists every field.
type Unlisted = Exclude<keyof RoundRecord, (typeof ROUND_KEYS)[number]>;
const everyFieldListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyFieldListed;

/** The record with its keys in the pinned order (an absent `run` skipped). */
export function buildRoundRecord(fields: RoundRecord): RoundRecord {
  const out: Record<string, unknown> = {};
  for (const key of ROUND_KEYS) if (fields[key] !== undefined) out[key] = fields[key];
  return out as unknown as RoundRecord;
}
