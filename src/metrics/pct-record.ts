/**
 * The one typed record of a pct: what the console prints, what the JSONL line holds (key for key, in this order),
 * and what `report`, gates and comparisons read. The reference script's keys come first, in its order and with its
 * meaning, so a file is a drop-in for the script's; ours follow. Every key is snake_case, nested ones too.
 */
import type { CacheStatus } from "./cache-check.ts";
import type { CachedTokensByTier, TtftByTier } from "./cache-tiers.ts";
import type { CachePressure } from "./cache-pressure.ts";
import type { IntendedHistograms, IntendedMetrics } from "./intended.ts";
import type { ErrorEntry, PctHistograms, PctResult } from "./summarize.ts";
import type { TtftModel, TtftMoments } from "./ttft-model.ts";
import type { ShardsReport } from "../schema/line-parts.ts";
import type { MergedFrom } from "../schema/line-parts.ts";
import type { GateResult } from "../schema/gate.ts";
import type { WorkloadFingerprint } from "./fingerprint.ts";
import { NUMERIC_KEYS } from "../schema/keys.ts";

/** What was run against what: written once per run, in the run's first pct line (`run`). */
export interface RunInfo {
  warmbench_version: string;
  started_at: string;
  /** Every option of the run, snake_case; the API key only as "(set)" or null. */
  options: Record<string, unknown>;
  /** The model name sent to the server (OpenAI backends); null for SGLang native. */
  served_model: string | null;
  page_size: number;
  page_size_source: "flag" | "server" | "backend default";
  /** The server endpoint that described it (/server_info...), or null. */
  server_info_source: string | null;
  server_version: string | null;
  /** The server's own description, secrets redacted. */
  server_info: Record<string, unknown> | null;
  /** The engine behind the URL, how it was settled, and what the sweep knows of its cache. */
  engine: RunEngine;
}

/** `run.engine`: what served the run. */
export interface RunEngine {
  /** "sglang", "vllm", "llama.cpp", or "openai" (any other OpenAI-compatible server). */
  name: string;
  /** "detected" (--backend auto) or "flag" (--backend NAME). */
  source: "detected" | "flag";
  /** What identified it: the server's answers, or the flag. */
  evidence: string;
  /** Path the measured requests went to. */
  endpoint: string;
  /** "token_ids", or "text" (chat: the text the ids decode to). */
  prompt_encoding: "token_ids" | "text";
  /** Prefix caches warmed and proven one by one (llama.cpp's slots); null: one shared cache. */
  cache_slots: number | null;
  /** Requests the server runs at once; null: not known. */
  max_running: number | null;
  /** Why the flush cannot make the server cold (e.g. llama.cpp's host-RAM cache); null: none found. */
  flush_gap: string | null;
}

/** `prompt_drift`: how text prompts came out after the server's tokenizer (null for token-id prompts). */
export interface PromptDrift {
  /** Ids the shared prefix was drawn as. */
  prefix_ids: number;
  /** Tokens its text re-tokenizes to. */
  prefix_tokens: number;
  /** First position where those tokens differ from the ids; -1: none. */
  prefix_drift_at: number;
  /** Leading prefix tokens no continuation moved: the least a prompt may report cached (+ the template head). */
  stable_tokens: number;
  /** Fewest and most leading tokens a prompt shares with the re-tokenized prefix. */
  min_shared_tokens: number;
  max_shared_tokens: number;
  /** Chat template tokens before the content that every prompt shares (learned after the flush). */
  template_head_tokens: number;
}

/** The script's keys, in its order (maybe_write_summary_jsonl). */
export const SCRIPT_KEYS = [
  "backend", "dataset_name", "request_rate", "max_concurrency", "shared_prefix_pct", "prefix_len", "suffix_len",
  "total_tokens", "num_prompts", "output_len", "completed", "benchmark_duration", "total_input", "total_output",
  "total_output_retokenized", "request_throughput", "input_throughput", "output_throughput",
  "output_throughput_retokenized", "total_throughput", "total_throughput_retokenized", "mean_ttft_ms",
  "median_ttft_ms", "std_ttft_ms", "p90_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "median_tpot_ms", "std_tpot_ms",
  "p90_tpot_ms", "p99_tpot_ms", "mean_itl_ms", "median_itl_ms", "std_itl_ms", "p90_itl_ms", "p99_itl_ms",
  "mean_e2e_latency_ms", "median_e2e_latency_ms", "std_e2e_latency_ms", "p99_e2e_latency_ms", "concurrency",
] as const;

export type ScriptKey = (typeof SCRIPT_KEYS)[number];

/**
 * One line (a pct at one working-set size and one request rate): the script's keys, then ours. The cache-pressure
 * fields (working_set_tokens = working_set x prefix_len, against the server's capacity) are CachePressure's.
 */
export interface PctRecord extends Pick<PctResult, ScriptKey>, IntendedMetrics, CachePressure {
  /** Shared by every line of one run: group lines by it. */
  run_id: string;
  /** The run's description; in the run's first pct line only. */
  run?: RunInfo;
  /** Every --gate whose pct scope holds this pct, evaluated on this line's numbers; [] without gates. */
  gates: GateResult[];
  /** What was sent, for pairing lines of two runs (`warmbench compare`). */
  workload: WorkloadFingerprint;
  /** Measured requests sent (completed + failed; cancelled ones are not counted). */
  sent: number;
  failed: number;
  /** At most 20 buckets of failures with the same kind and message, largest first. */
  errors: ErrorEntry[];
  /** Failures per kind, over all failures. */
  errors_by_kind: Record<string, number>;
  /** The run was stopped (SIGINT/SIGTERM) while this pct was measured: it holds the requests that completed. */
  interrupted: boolean;
  /** Gamma shape of the gaps between arrivals (1 = Poisson, Infinity = evenly spaced); null in a closed loop. */
  burstiness: number | null;
  /** --duration: arrivals stopped after this many seconds (num_prompts then holds how many were due); null without. */
  duration_limit_s: number | null;
  page_size: number;
  expected_cached_tokens: number;
  mean_cached_tokens: number | null;
  min_cached_tokens: number | null;
  max_cached_tokens: number | null;
  cached_tokens_mismatched: number | null;
  /** [cached_tokens, requests] pairs, most frequent first, at most 10. */
  cached_tokens_counts: Array<[number, number]>;
  expected_hit_ratio: number;
  observed_hit_ratio: number | null;
  /** From the server's Prometheus counters over the measured window; null without /metrics. */
  server_cache_hit_rate: number | null;
  /** Distinct shared prefixes in rotation (--working-set): prompt i shares prefix i mod K. */
  working_set: number;
  /** Cached prompt tokens per cache tier over the pct's requests; null when the server reports no breakdown. */
  cached_tokens_by_tier: CachedTokensByTier | null;
  /** TTFT of the requests each tier served (the deepest tier a prefix needed); null without the breakdown. */
  ttft_by_tier: TtftByTier | null;
  cache_check: CacheStatus;
  flushed: boolean;
  flush_attempts: number;
  flush_verified: boolean | null;
  /** Cached tokens a probe of a sequence cached before the flush found after it (must be 0); null: not probed. */
  flush_probe_cached_tokens: number | null;
  warm_verified: boolean | null;
  warm_cached_tokens: number | null;
  /** How late a 10 ms probe timer fired on the JS thread, whatever the cause (p99, max), ms. */
  client_loop_lag_p99_ms: number;
  client_loop_lag_max_ms: number;
  /** The part of that lateness the JS thread's own work explains (p99), ms: the saturation verdict reads this. */
  client_own_lag_p99_ms: number;
  /** CPU of the JS thread, which stamps every event, % of one core: the saturation verdict reads this. */
  client_js_cpu_pct: number;
  /** CPU of Bun's HTTP client thread, % of one core; null where it cannot be read. */
  client_http_cpu_pct: number | null;
  /** CPU of the whole process, every thread, % of one core (informative). */
  client_cpu_pct: number;
  client_saturated: boolean;
  /** The shards that measured this pct (how many, where, their clocks and health, which failed); null in one process. */
  shards: ShardsReport | null;
  /** This pct's sufficient statistics of (uncached tokens, TTFT): merge them to refit the sweep's model. */
  ttft_fit: TtftMoments | null;
  /** The TTFT model over the run's pcts up to and including this one. */
  ttft_model: TtftModel | null;
  hdr: PctHistograms & IntendedHistograms;
  hdr_unit: "us";
  warmbench_version: string;
  started_at: string;
  model: string;
  tokenizer: string;
  population_size: number;
  seed: string;
  base_url: string;
  server_version: string | null;
  text_mode: "cumulative" | "incremental";
  /** "token_ids", or "text": the prompts went out as the text their ids decode to (chat). */
  prompt_encoding: "token_ids" | "text";
  prompt_drift: PromptDrift | null;
  /** Only in a line written by `warmbench merge`: the runs it merged, and which numbers come from histograms. */
  merged?: MergedFrom;
}

/** What produced a line (this build, the server, the tokenizer, the seed): the same keys in a multi-turn round line. */
export type Provenance = Pick<
  PctRecord,
  "warmbench_version" | "started_at" | "model" | "tokenizer" | "population_size" | "seed" | "base_url" | "server_version" | "text_mode"
>;

/** Our keys, after the script's: everything of PctRecord that the script does not write. */
export type OwnFields = Omit<PctRecord, ScriptKey>;

/** Our keys in the order they are written (the JSONL schema test pins this order too). */
export const OWN_KEYS = [
  "run_id", "run", "gates", "workload", "sent", "failed", "errors", "errors_by_kind", "interrupted",
  "burstiness", "duration_limit_s", "achieved_request_rate",
  "ttft_from_intended_mean_ms", "ttft_from_intended_median_ms", "ttft_from_intended_p90_ms", "ttft_from_intended_p99_ms",
  "e2e_from_intended_mean_ms", "e2e_from_intended_median_ms", "e2e_from_intended_p90_ms", "e2e_from_intended_p99_ms",
  "schedule_lag_mean_ms", "schedule_lag_median_ms", "schedule_lag_p90_ms", "schedule_lag_p99_ms",
  "page_size", "expected_cached_tokens", "mean_cached_tokens", "min_cached_tokens", "max_cached_tokens",
  "cached_tokens_mismatched", "cached_tokens_counts", "expected_hit_ratio", "observed_hit_ratio", "server_cache_hit_rate",
  "working_set", "working_set_tokens", "cache_capacity_tokens", "host_cache_capacity_tokens", "working_set_fits",
  "cache_shortfall_requests", "eviction", "cached_tokens_by_tier", "ttft_by_tier",
  "cache_check", "flushed", "flush_attempts", "flush_verified", "flush_probe_cached_tokens", "warm_verified", "warm_cached_tokens",
  "client_loop_lag_p99_ms", "client_loop_lag_max_ms", "client_own_lag_p99_ms", "client_js_cpu_pct", "client_http_cpu_pct", "client_cpu_pct", "client_saturated", "shards",
  "ttft_fit", "ttft_model", "hdr", "hdr_unit",
  "warmbench_version", "started_at", "model", "tokenizer", "population_size", "seed", "base_url", "server_version", "text_mode",
  "prompt_encoding", "prompt_drift", "merged",
] as const satisfies ReadonlyArray<keyof OwnFields>;

// Compile-time proof that OWN_KEYS lists every field: a key added to PctRecord but not here fails the build.
type Unlisted = Exclude<keyof OwnFields, (typeof OWN_KEYS)[number]>;
const everyFieldListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyFieldListed;

/** Keys of PctRecord whose value is a number (or null where it could not be measured). */
type NumericKey = { [K in keyof PctRecord]-?: [PctRecord[K]] extends [number | null] ? K : never }[keyof PctRecord];

/** The record, keys in the pinned order: the script's from `metrics`, then ours (absent optional ones skipped). */
export function buildPctRecord(metrics: Pick<PctResult, ScriptKey>, own: OwnFields): PctRecord {
  const out: Record<string, unknown> = {};
  for (const key of SCRIPT_KEYS) out[key] = metrics[key];
  for (const key of OWN_KEYS) if (own[key] !== undefined) out[key] = own[key];
  return out as unknown as PctRecord;
}

// Compile-time proof that every key of the list in src/schema/keys.ts is numeric in the record.
const everyListedNumeric: ReadonlyArray<NumericKey> = NUMERIC_KEYS;
void everyListedNumeric;

/**
 * A pct line as read back from a file: ours, one written by 0.1, or one written by the script itself (which has
 * only the script's keys). Each of our sections is shown only when its keys are there.
 */
export type PctLine = Pick<PctRecord, ScriptKey> & Partial<Omit<OwnFields, "hdr">> & { hdr?: PctHistograms & Partial<IntendedHistograms> };
