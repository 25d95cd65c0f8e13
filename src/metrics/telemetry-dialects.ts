/**
 * What warmbench reads of each engine's /metrics (docs/protocol.md "Server telemetry" has the table and the source of
 * every name): one snapshot of the same figures whatever the dialect, so the series, the summaries and the
 * reconciliation never branch on an engine. Counters are cumulative since the server started; gauges are now. A
 * figure the dialect does not expose is null, never 0. Pure.
 */
import { sumSamples, type MetricFamily } from "./telemetry-prometheus-text.ts";

const DIALECTS = ["sglang", "vllm", "llamacpp"] as const;
export type Dialect = (typeof DIALECTS)[number];

/** One scrape in warmbench's terms. */
export interface TelemetrySnapshot {
  dialect: Dialect;
  /** KV cache in use, 0-1 (SGLang's token_usage, vLLM's kv_cache_usage_perc); null: not exposed. */
  kvUsage: number | null;
  /** Requests running (in the batch). */
  running: number | null;
  /** Requests waiting (queued, deferred). */
  waiting: number | null;
  /** Preemptions (vLLM) or retractions (SGLang) since start. */
  preemptions: number | null;
  /** Prompt tokens of every request since start, cached ones included. */
  promptTokens: number | null;
  /** Prompt tokens served from the cache since start, every tier. */
  cachedTokens: number | null;
  /**
   * Of cachedTokens, each tier's where the server labels them apart (SGLang's cache_source: device, host, storage);
   * a tier without a series is null; the whole is null where the server keeps one figure.
   */
  cachedTokensByTier: CachedByTier | null;
  generationTokens: number | null;
  /** Requests the server finished since start; null: not counted (llama.cpp). */
  requests: number | null;
}

export const CACHE_TIERS = ["device", "host", "storage"] as const;
type CacheTier = (typeof CACHE_TIERS)[number];
type CachedByTier = Record<CacheTier, number | null>;

type Families = ReadonlyMap<string, MetricFamily>;
/**
 * A counter's family under either name: the 0.0.4 text of prometheus_client declares `x_total` (`# TYPE x_total
 * counter`), OpenMetrics and other clients `x` with samples `x_total`.
 */
const familyNamed = (f: Families, name: string): MetricFamily | undefined =>
  f.get(name) ?? f.get(`${name}_total`) ?? (name.endsWith("_total") ? f.get(name.slice(0, -6)) : undefined);
const sum = (f: Families, name: string, skip?: (l: Readonly<Record<string, string>>) => boolean): number | null =>
  sumSamples(familyNamed(f, name), undefined, skip);
/** SGLang labels a total beside its per-tier series: counted once. */
const notTotal = (l: Readonly<Record<string, string>>): boolean => l.cache_source === "total";
/** The tier of an SGLang cache_source label: device, host, or storage (labelled storage_<Backend>); null: total or other. */
function tierOf(source: string | undefined): CacheTier | null {
  if (source === "device" || source === "host") return source;
  return source?.startsWith("storage") === true ? "storage" : null;
}

/** SGLang's cached tokens split by cache_source, where it labels any tier; null where it does not. */
function byTier(f: Families, name: string): CachedByTier | null {
  const family = familyNamed(f, name);
  if (family === undefined || !family.samples.some((s) => tierOf(s.labels.cache_source) !== null)) return null;
  const tiers = {} as CachedByTier;
  for (const tier of CACHE_TIERS) tiers[tier] = sumSamples(family, undefined, (l) => tierOf(l.cache_source) !== tier);
  return tiers;
}
const plus = (a: number | null, b: number | null): number | null => (a === null || b === null ? null : a + b);
/** A gauge over several label sets (vLLM's engines): the mean for a share, the sum for a count. */
function meanOf(f: MetricFamily | undefined): number | null {
  if (f === undefined) return null;
  const v = f.samples.filter((s) => Number.isFinite(s.value)).map((s) => s.value);
  return v.length === 0 ? null : v.reduce((a, b) => a + b, 0) / v.length;
}

const READERS: Record<Dialect, (f: Families) => Omit<TelemetrySnapshot, "dialect">> = {
  sglang: (f) => ({
    kvUsage: meanOf(f.get("sglang:token_usage")),
    running: sum(f, "sglang:num_running_reqs"),
    waiting: sum(f, "sglang:num_queue_reqs"),
    preemptions: sum(f, "sglang:num_retracted_requests_total"),
    promptTokens: sum(f, "sglang:prompt_tokens_total"),
    cachedTokens: sum(f, "sglang:cached_tokens_total", notTotal),
    cachedTokensByTier: byTier(f, "sglang:cached_tokens_total"),
    generationTokens: sum(f, "sglang:generation_tokens_total"),
    requests: sum(f, "sglang:num_requests_total"),
  }),
  vllm: (f) => ({
    // The newer spelling first; older vLLM releases name the same gauge gpu_cache_usage_perc.
    kvUsage: meanOf(f.get("vllm:kv_cache_usage_perc")) ?? meanOf(f.get("vllm:gpu_cache_usage_perc")),
    running: sum(f, "vllm:num_requests_running"),
    waiting: sum(f, "vllm:num_requests_waiting"),
    preemptions: sum(f, "vllm:num_preemptions"),
    promptTokens: sum(f, "vllm:prompt_tokens"),
    cachedTokens: sum(f, "vllm:prefix_cache_hits") ?? sum(f, "vllm:gpu_prefix_cache_hits"),
    cachedTokensByTier: null,
    generationTokens: sum(f, "vllm:generation_tokens"),
    requests: sum(f, "vllm:request_success"),
  }),
  llamacpp: (f) => {
    // llama.cpp counts the prompt tokens it computed; the cached ones apart (prompt_tokens_cached_total).
    const computed = sum(f, "llamacpp:prompt_tokens_total");
    const cached = sum(f, "llamacpp:prompt_tokens_cached_total");
    return {
      kvUsage: meanOf(f.get("llamacpp:kv_cache_usage_ratio")),
      running: sum(f, "llamacpp:requests_processing"),
      waiting: sum(f, "llamacpp:requests_deferred"),
      preemptions: null,
      promptTokens: plus(computed, cached),
      cachedTokens: cached,
      cachedTokensByTier: null,
      generationTokens: sum(f, "llamacpp:tokens_predicted_total"),
      requests: null,
    };
  },
};

/** The dialect of a scrape: the first whose families it holds (SGLang's mock serves vLLM's names beside its own). */
function dialectOf(families: Families): Dialect | null {
  for (const d of DIALECTS) {
    for (const name of families.keys()) if (name.startsWith(`${d}:`)) return d;
  }
  return null;
}

/** A scrape's families as warmbench's snapshot; null: no dialect warmbench knows. */
export function readSnapshot(families: Families, dialect: Dialect | null = dialectOf(families)): TelemetrySnapshot | null {
  if (dialect === null) return null;
  return { dialect, ...READERS[dialect](families) };
}

/** The families each dialect's reader looks at (as named above, without `_total`); the rest is kept only with --scrape-all. */
const READ: Record<Dialect, readonly string[]> = {
  sglang: [
    "token_usage",
    "num_running_reqs",
    "num_queue_reqs",
    "num_retracted_requests",
    "prompt_tokens",
    "cached_tokens",
    "generation_tokens",
    "num_requests",
  ],
  vllm: [
    "kv_cache_usage_perc",
    "gpu_cache_usage_perc",
    "num_requests_running",
    "num_requests_waiting",
    "num_preemptions",
    "prompt_tokens",
    "prefix_cache_hits",
    "gpu_prefix_cache_hits",
    "generation_tokens",
    "request_success",
  ],
  llamacpp: ["kv_cache_usage_ratio", "requests_processing", "requests_deferred", "prompt_tokens", "prompt_tokens_cached", "tokens_predicted"],
};

/** Whether the dialect's reader reads this family (null dialect: none is read). */
export function readByDialect(dialect: Dialect | null, family: string): boolean {
  if (dialect === null) return false;
  const name = family.endsWith("_total") ? family.slice(0, -6) : family;
  return READ[dialect].some((n) => name === `${dialect}:${n}`);
}
