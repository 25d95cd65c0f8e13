/**
 * How each key of a merged line comes from the lines of one point, one per run: one rule per key of the key table,
 * the same for a sweep line and a round line wherever the key means the same (a key means what the table says in
 * either kind). The compiler holds every key of the table to a rule here, so a key added to the table cannot be
 * merged by accident.
 */
import { UsageError } from "../errors.ts";
import { encodeHistogram, decodeHistogram } from "../metrics/histograms.ts";
import type { Histogram } from "hdr-histogram-js";
import { fitFromMoments, mergeTtftMoments, type TtftMoments } from "../metrics/ttft-model.ts";
import type { CacheStatus } from "../metrics/cache-check.ts";
import type { CachedTokensByTier } from "../schema/nested.ts";
import type { WorkloadFingerprint } from "../schema/nested.ts";
import type { ErrorEntry } from "../schema/nested.ts";
import type { KeyName } from "../schema/key-table.ts";
import type { LatencyStats } from "../metrics/script-metrics.ts";
import type { LineEvidence } from "../schema/nested.ts";
import { evidenceOf, runIdsOf } from "../metrics/evidence-check.ts";
import type { LineKind, RoundRecord, SweepRecord } from "../schema/lines.ts";
import { INTENDED_FROM_HISTOGRAMS, mergedIntended } from "./merge-intended.ts";
import {
  addCounts,
  allOf,
  mergeErrors,
  mergedHistogram,
  num,
  pctMs,
  pooled,
  sum,
  sumOrNull,
  sumTiers,
  topCounts,
  weightedOrNull,
  worstStatus,
} from "./merge-math.ts";

/** A line as read back from a file, of either kind: what merge reads of it (a key a kind lacks is absent). */
export type MergeLine = Partial<Omit<SweepRecord, "hdr" | "expected_hit_ratio">> &
  Partial<Omit<RoundRecord, "hdr" | "expected_hit_ratio">> & {
    expected_hit_ratio?: number | null;
    hdr?: Partial<SweepRecord["hdr"]> | null;
  };

/** Percentile keys of the script's series taken from the merged histograms. */
const FROM_HISTOGRAMS = [
  "median_ttft_ms",
  "p90_ttft_ms",
  "p99_ttft_ms",
  "median_tpot_ms",
  "p90_tpot_ms",
  "p99_tpot_ms",
  "median_itl_ms",
  "p90_itl_ms",
  "p99_itl_ms",
  "median_e2e_latency_ms",
  "p99_e2e_latency_ms",
];

/** Each latency series: its histogram, and the stem of its keys (mean_<stem>_ms...). */
const SERIES = { ttft: "ttft_us", tpot: "tpot_us", itl: "itl_us", e2e: "e2e_latency_us" } as const;
const STEM = { ttft: "ttft", tpot: "tpot", itl: "itl", e2e: "e2e_latency" } as const;
type Series = keyof typeof SERIES;
interface Stats {
  mean: number;
  median: number;
  std: number;
  p90: number;
  p99: number;
}

/** What every rule reads: the point's lines and what is computed once from them all. */
export interface Merging {
  kind: LineKind;
  lines: readonly MergeLine[];
  first: MergeLine;
  files: readonly string[];
  starts: number[];
  /** The union of the runs' windows, s. */
  windowS: number;
  completed: number;
  h: Record<Series, Histogram>;
  stats: Record<Series, Stats>;
  /** Lines whose requests reported cached tokens, and the weight of each in a mean over requests. */
  reported: MergeLine[];
  weight: (l: MergeLine) => number;
  intended: () => ReturnType<typeof mergedIntended>;
  moments: TtftMoments | null;
  /** The union's statistics computed exactly from every run's request details, with their files; null: from histograms. */
  exact: { stats: LatencyStats; files: readonly string[] } | null;
}

export function mergingOf(lines: readonly MergeLine[], files: readonly string[], kind: LineKind, exact: Merging["exact"] = null): Merging {
  const first = lines[0]!;
  const starts = lines.map((l) => Date.parse(String(l.started_at ?? "")));
  const ends = lines.map((l, k) => starts[k]! + num(l.benchmark_duration) * 1000);
  const windowS = starts.every(Number.isFinite) ? (Math.max(...ends) - Math.min(...starts)) / 1000 : Math.max(...lines.map((l) => num(l.benchmark_duration)));
  const h = Object.fromEntries(Object.entries(SERIES).map(([s, key]) => [s, mergedHistogram(lines.map((l) => l.hdr![key]!))])) as Record<Series, Histogram>;
  const countOf = (key: "tpot_us" | "itl_us") => (l: MergeLine) => decodeHistogram(l.hdr![key]!).totalCount;
  const stats = (series: Series, count: (l: MergeLine) => number): Stats => {
    const p = pooled(lines.map((l) => ({ n: count(l), mean: num(l[`mean_${STEM[series]}_ms`]), std: num(l[`std_${STEM[series]}_ms`]) })));
    const hist = h[series];
    return { mean: p.mean, median: pctMs(hist, 50), std: p.std, p90: pctMs(hist, 90), p99: pctMs(hist, 99) };
  };
  let moments: TtftMoments | null = null;
  for (const l of lines) moments = mergeTtftMoments(moments, l.ttft_fit ?? null);
  const m: Merging = {
    kind,
    lines,
    first,
    files,
    starts,
    windowS,
    h,
    moments,
    exact,
    completed: sum(lines.map((l) => num(l.completed))),
    stats: {
      ttft: stats("ttft", (l) => num(l.completed)),
      tpot: stats("tpot", countOf("tpot_us")),
      itl: stats("itl", countOf("itl_us")),
      e2e: stats("e2e", (l) => num(l.completed)),
    },
    reported: lines.filter((l) => typeof (kind === "round" ? l.observed_cached_tokens : l.mean_cached_tokens) === "number"),
    // A sweep line's prompts have one length, so each request weighs the same; a round's grow with the history.
    weight: kind === "round" ? (l) => l.total_input ?? 0 : (l) => num(l.completed),
    intended: () =>
      intended ??
      (intended = mergedIntended(lines, { ttft: h.ttft, e2e: h.e2e, ttftMeanMs: m.stats.ttft.mean, e2eMeanMs: m.stats.e2e.mean, exact: exact?.stats ?? null })),
  };
  let intended: ReturnType<typeof mergedIntended> | undefined;
  return m;
}

type Rule = (m: Merging) => unknown;
/** The first run's value: a key that tells the point apart, which every run must share (merge-agree.ts). */
const first =
  (key: keyof MergeLine): Rule =>
  (m) =>
    m.first[key];
const added =
  (key: keyof MergeLine): Rule =>
  (m) =>
    sum(m.lines.map((l) => num(l[key])));
const addedOrNull =
  (key: keyof MergeLine): Rule =>
  (m) =>
    m.lines.every((l) => typeof l[key] === "number") ? sum(m.lines.map((l) => num(l[key]))) : null;
const most =
  (key: keyof MergeLine): Rule =>
  (m) =>
    Math.max(...m.lines.map((l) => num(l[key])));
const perSecond =
  (of: (m: Merging) => number): Rule =>
  (m) =>
    of(m) / m.windowS;
const total = (key: "total_input" | "total_output" | "total_output_retokenized") => (m: Merging) => sum(m.lines.map((l) => num(l[key])));
/** Exact from the request details when merge has them; else pooled means and histogram percentiles; null without a sample. */
const stat =
  (series: Series, which: keyof Stats): Rule =>
  (m) => {
    const key = `${which}_${STEM[series]}_ms` as keyof LatencyStats;
    if (m.exact !== null) return m.exact.stats[key];
    return m.h[series].totalCount === 0 ? null : m.stats[series][which];
  };
const fromIntended =
  (key: keyof ReturnType<typeof mergedIntended>["metrics"]): Rule =>
  (m) =>
    m.intended().metrics[key];
/** Not known for the union: a figure of the server's over each run's own window, or of samples merge does not have. */
const unknown: Rule = () => null;
/** Added up over the runs where the lines carry the key; absent where they do not. */
const addedIfThere =
  (key: keyof MergeLine): Rule =>
  (m) =>
    m.first[key] === undefined ? undefined : sum(m.lines.map((l) => num(l[key])));
const lossRatio =
  (key: "loss_routing_tokens" | "loss_eviction_tokens" | "loss_engine_tokens"): Rule =>
  (m) => {
    if (m.first[key] === undefined) return undefined;
    const available = sum(m.lines.map((l) => num(l.ledger_available_tokens)));
    return available > 0 ? sum(m.lines.map((l) => num(l[key]))) / available : null;
  };
const text =
  (key: keyof MergeLine): Rule =>
  (m) =>
    String(m.first[key] ?? "");
/** Of a cache figure reported per request: over the lines that reported any, weighted by their requests. */
const reportedMean =
  (key: "mean_cached_tokens" | "observed_hit_ratio"): Rule =>
  (m) =>
    m.reported.length ? sum(m.reported.map((l) => num(l[key]) * m.weight(l))) / sum(m.reported.map(m.weight)) : null;

/** A sweep's runs rotate the same prefixes; each multi-turn run adds its own conversations' histories. */
const workingSetTokens = (m: Merging): number =>
  m.kind === "round" ? sum(m.lines.map((l) => num(l.working_set_tokens))) : num(m.first.working_set_tokens ?? m.first.prefix_len);

export const RULES = {
  // The point's axes and the work's shape: the same in every run.
  backend: first("backend"),
  dataset_name: first("dataset_name"),
  request_rate: first("request_rate"),
  shared_prefix_pct: first("shared_prefix_pct"),
  prefix_len: first("prefix_len"),
  suffix_len: first("suffix_len"),
  total_tokens: first("total_tokens"),
  output_len: first("output_len"),
  type: first("type"),
  round: first("round"),
  num_rounds: first("num_rounds"),
  round_barrier: first("round_barrier"),
  ready_queue_policy: first("ready_queue_policy"),
  shared_system_tokens: first("shared_system_tokens"),
  first_turn_tokens: first("first_turn_tokens"),
  turn_tokens: first("turn_tokens"),
  working_set: (m) => num(m.first.working_set ?? 1),
  // The axes later producers add (absent from lines without them, so from the merged line too).
  repeat: first("repeat"),
  probe: first("probe"),
  window: first("window"),
  // A trace replay's own keys (absent from other lines, so from their merged lines too).
  block_size: first("block_size"),
  time_scale: first("time_scale"),
  predicted_eviction_tokens: addedIfThere("predicted_eviction_tokens"),
  observed_shortfall_tokens: addedIfThere("observed_shortfall_tokens"),
  cache_short_requests: addedIfThere("cache_short_requests"),
  cache_over_requests: addedIfThere("cache_over_requests"),
  infinite_hit_ratio: (m) => (m.first.infinite_hit_ratio === undefined ? undefined : null),
  // The ledger's sums add up, its ratios are the sums'; each run's replicas are its own.
  route: first("route"),
  replicas: (m) => (m.first.replicas === undefined ? undefined : null),
  routing_imbalance: (m) => (m.first.routing_imbalance === undefined ? undefined : null),
  ledger_requests: addedIfThere("ledger_requests"),
  ledger_unattributed_requests: addedIfThere("ledger_unattributed_requests"),
  ledger_available_tokens: addedIfThere("ledger_available_tokens"),
  ledger_on_replica_tokens: addedIfThere("ledger_on_replica_tokens"),
  ledger_modelled_tokens: addedIfThere("ledger_modelled_tokens"),
  ledger_delivered_tokens: addedIfThere("ledger_delivered_tokens"),
  loss_routing_tokens: addedIfThere("loss_routing_tokens"),
  loss_eviction_tokens: addedIfThere("loss_eviction_tokens"),
  loss_engine_tokens: addedIfThere("loss_engine_tokens"),
  loss_routing_ratio: lossRatio("loss_routing_tokens"),
  loss_eviction_ratio: lossRatio("loss_eviction_tokens"),
  loss_engine_ratio: lossRatio("loss_engine_tokens"),
  // The fidelity check's counts add up; the positions are every run's; the largest gap is the largest.
  fidelity_checked: addedIfThere("fidelity_checked"),
  fidelity_identical: addedIfThere("fidelity_identical"),
  fidelity_near_tie: addedIfThere("fidelity_near_tie"),
  fidelity_diverged: addedIfThere("fidelity_diverged"),
  fidelity_unclassified: addedIfThere("fidelity_unclassified"),
  fidelity_unproven: addedIfThere("fidelity_unproven"),
  fidelity_first_divergence: (m) =>
    m.first.fidelity_first_divergence === undefined
      ? undefined
      : m.lines.flatMap((l) => (Array.isArray(l.fidelity_first_divergence) ? l.fidelity_first_divergence : [])).sort((a, b) => a - b),
  fidelity_max_gap_nats: (m) => {
    if (m.first.fidelity_max_gap_nats === undefined) return undefined;
    const gaps = m.lines.flatMap((l) => (typeof l.fidelity_max_gap_nats === "number" ? [l.fidelity_max_gap_nats] : []));
    return gaps.length > 0 ? Math.max(...gaps) : null;
  },
  fidelity_note: (m) => {
    if (m.first.fidelity_note === undefined) return undefined;
    const notes = [...new Set(m.lines.flatMap((l) => (typeof l.fidelity_note === "string" ? [l.fidelity_note] : [])))];
    return notes.length > 0 ? notes.join("; ") : null;
  },
  ttft_by_cached_fraction: (m) => (m.first.ttft_by_cached_fraction === undefined ? undefined : null),
  burstiness: (m) => m.first.burstiness ?? null,
  duration_limit_s: (m) => m.first.duration_limit_s ?? null,
  page_size: (m) => num(m.first.page_size),

  // What the runs sent side by side adds up.
  max_concurrency: added("max_concurrency"),
  num_prompts: added("num_prompts"),
  num_clients: added("num_clients"),
  clients_in_round: added("clients_in_round"),
  completed: (m) => m.completed,
  sent: added("sent"),
  failed: added("failed"),
  total_input: total("total_input"),
  total_output: total("total_output"),
  total_output_retokenized: total("total_output_retokenized"),
  benchmark_duration: (m) => m.windowS,
  request_throughput: perSecond((m) => m.completed),
  input_throughput: perSecond(total("total_input")),
  output_throughput: perSecond(total("total_output")),
  output_throughput_retokenized: perSecond(total("total_output_retokenized")),
  total_throughput: perSecond((m) => total("total_input")(m) + total("total_output")(m)),
  total_throughput_retokenized: perSecond((m) => total("total_input")(m) + total("total_output_retokenized")(m)),
  mean_ttft_ms: stat("ttft", "mean"),
  median_ttft_ms: stat("ttft", "median"),
  std_ttft_ms: stat("ttft", "std"),
  p90_ttft_ms: stat("ttft", "p90"),
  p99_ttft_ms: stat("ttft", "p99"),
  mean_tpot_ms: stat("tpot", "mean"),
  median_tpot_ms: stat("tpot", "median"),
  std_tpot_ms: stat("tpot", "std"),
  p90_tpot_ms: stat("tpot", "p90"),
  p99_tpot_ms: stat("tpot", "p99"),
  mean_itl_ms: stat("itl", "mean"),
  median_itl_ms: stat("itl", "median"),
  std_itl_ms: stat("itl", "std"),
  p90_itl_ms: stat("itl", "p90"),
  p99_itl_ms: stat("itl", "p99"),
  mean_e2e_latency_ms: stat("e2e", "mean"),
  median_e2e_latency_ms: stat("e2e", "median"),
  std_e2e_latency_ms: stat("e2e", "std"),
  p99_e2e_latency_ms: stat("e2e", "p99"),
  concurrency: (m) => (m.completed === 0 ? 0 : (m.stats.e2e.mean * m.completed) / 1000 / m.windowS),

  run_id: (m) => `merged-${m.lines.map((l) => l.run_id ?? "x").join("+")}`.slice(0, 64),
  // Gates judged each run; the merged line is judged afresh by whoever reads it (compare, report).
  gates: () => [],
  workload: (m) => mergedWorkload(m.lines),
  errors: (m) => mergeErrors(m.lines.flatMap((l) => (l.errors as ErrorEntry[] | undefined) ?? [])),
  errors_by_kind: (m) => addCounts(m.lines.map((l) => l.errors_by_kind ?? {})),
  interrupted: (m) => m.lines.some((l) => l.interrupted === true),
  achieved_request_rate: fromIntended("achieved_request_rate"),
  ttft_from_intended_mean_ms: fromIntended("ttft_from_intended_mean_ms"),
  ttft_from_intended_median_ms: fromIntended("ttft_from_intended_median_ms"),
  ttft_from_intended_p90_ms: fromIntended("ttft_from_intended_p90_ms"),
  ttft_from_intended_p99_ms: fromIntended("ttft_from_intended_p99_ms"),
  e2e_from_intended_mean_ms: fromIntended("e2e_from_intended_mean_ms"),
  e2e_from_intended_median_ms: fromIntended("e2e_from_intended_median_ms"),
  e2e_from_intended_p90_ms: fromIntended("e2e_from_intended_p90_ms"),
  e2e_from_intended_p99_ms: fromIntended("e2e_from_intended_p99_ms"),
  schedule_lag_mean_ms: fromIntended("schedule_lag_mean_ms"),
  schedule_lag_median_ms: fromIntended("schedule_lag_median_ms"),
  schedule_lag_p90_ms: fromIntended("schedule_lag_p90_ms"),
  schedule_lag_p99_ms: fromIntended("schedule_lag_p99_ms"),
  mean_prompt_len: (m) =>
    weightedOrNull(
      m.lines.map((l) => l.mean_prompt_len),
      m.lines.map((l) => num(l.completed)),
    ),
  max_prompt_len: (m) => (m.lines.some((l) => typeof l.max_prompt_len === "number") ? Math.max(...m.lines.map((l) => num(l.max_prompt_len))) : null),

  // The prefix cache. A sweep line expects the same cached tokens of each request; a round line sums its turns'.
  expected_cached_tokens: (m) => (m.kind === "round" ? added("expected_cached_tokens")(m) : num(m.first.expected_cached_tokens)),
  observed_cached_tokens: (m) => sumOrNull(m.lines.map((l) => l.observed_cached_tokens)),
  mean_cached_tokens: reportedMean("mean_cached_tokens"),
  min_cached_tokens: (m) => (m.reported.length ? Math.min(...m.reported.map((l) => num(l.min_cached_tokens))) : null),
  max_cached_tokens: (m) => (m.reported.length ? Math.max(...m.reported.map((l) => num(l.max_cached_tokens))) : null),
  cached_tokens_mismatched: (m) => (m.reported.length ? sum(m.reported.map((l) => num(l.cached_tokens_mismatched))) : null),
  cached_tokens_counts: (m) => topCounts(m.lines.flatMap((l) => l.cached_tokens_counts ?? [])),
  expected_hit_ratio: (m) =>
    m.kind === "round"
      ? weightedOrNull(
          m.lines.map((l) => l.expected_hit_ratio),
          m.lines.map(m.weight),
        )
      : num(m.first.expected_hit_ratio),
  observed_hit_ratio: reportedMean("observed_hit_ratio"),
  server_cache_hit_rate: unknown,
  approximate_turns: added("approximate_turns"),
  working_set_tokens: (m) => workingSetTokens(m),
  cache_capacity_tokens: (m) => m.first.cache_capacity_tokens ?? null,
  host_cache_capacity_tokens: (m) => m.first.host_cache_capacity_tokens ?? null,
  working_set_fits: (m) => {
    const capacity = m.first.cache_capacity_tokens;
    if (m.kind !== "round") return m.first.working_set_fits ?? null;
    return typeof capacity === "number" ? workingSetTokens(m) <= capacity : null;
  },
  cache_shortfall_requests: addedOrNull("cache_shortfall_requests"),
  eviction: (m) => (m.lines.some((l) => l.eviction === true) ? true : m.lines.every((l) => l.eviction === false) ? false : null),
  cached_tokens_by_tier: (m) => sumTiers(m.lines.map((l) => (l.cached_tokens_by_tier as CachedTokensByTier | null | undefined) ?? null)),
  // Per-tier medians and p99s of several runs cannot be combined without their samples.
  ttft_by_tier: unknown,
  cache_check: (m) => worstStatus(m.lines.map((l) => (l.cache_check as CacheStatus | undefined) ?? "off")),
  flushed: (m) => m.lines.every((l) => l.flushed === true),
  flush_attempts: added("flush_attempts"),
  flush_verified: (m) => allOf(m.lines.map((l) => l.flush_verified)),
  flush_probe_cached_tokens: unknown,
  warm_verified: (m) => allOf(m.lines.map((l) => l.warm_verified)),
  warm_cached_tokens: unknown,

  // The clients' health: the worst of them.
  client_loop_lag_p99_ms: most("client_loop_lag_p99_ms"),
  client_loop_lag_max_ms: most("client_loop_lag_max_ms"),
  client_own_lag_p99_ms: most("client_own_lag_p99_ms"),
  client_js_cpu_pct: most("client_js_cpu_pct"),
  client_http_cpu_pct: unknown,
  client_cpu_pct: most("client_cpu_pct"),
  client_saturated: (m) => m.lines.some((l) => l.client_saturated === true),
  shards: unknown,

  ttft_fit: (m) => m.moments,
  ttft_model: (m) => fitFromMoments(m.moments),
  // Each run's buckets start at its own first send, on its own clock, with a width chosen from its own duration, and
  // the window needs every request's send and end: neither can be rebuilt for the union from the runs' lines.
  steady_state: unknown,
  timeline: unknown,
  hdr: (m) => ({
    ttft_us: encodeHistogram(m.h.ttft),
    tpot_us: encodeHistogram(m.h.tpot),
    itl_us: encodeHistogram(m.h.itl),
    e2e_latency_us: encodeHistogram(m.h.e2e),
    ...(m.kind === "round" ? {} : m.intended().hdr),
  }),
  hdr_unit: () => "us",

  warmbench_version: text("warmbench_version"),
  started_at: (m) => new Date(Math.min(...m.starts.filter(Number.isFinite))).toISOString(),
  model: text("model"),
  tokenizer: text("tokenizer"),
  population_size: (m) => num(m.first.population_size),
  seed: text("seed"),
  base_url: text("base_url"),
  server_version: (m) => m.first.server_version ?? null,
  text_mode: (m) => (m.first.text_mode === "incremental" ? "incremental" : "cumulative"),
  prompt_encoding: (m) => (m.first.prompt_encoding === "text" ? "text" : "token_ids"),
  prompt_drift: unknown,
  // A capacity line is a search's verdict, not a point (readers and merge never take it as one): its own keys have
  // nothing to merge.
  search: unknown,
  capacity_request_rate: unknown,
  capacity_concurrency: unknown,
  capacity_bracket: unknown,
  binding_gate: unknown,
  capacity_status: unknown,
  capacity_reason: unknown,
  probes_counted: unknown,
  probes_sent: unknown,
  search_wall_s: unknown,
  precision: unknown,
  confirm: unknown,
  evidence: (m) => mergedEvidence(m.lines),
  merged: (m) => ({
    files: m.files,
    run_ids: m.lines.map((l) => l.run_id ?? null),
    histogram_derived: [...(m.exact === null ? FROM_HISTOGRAMS : []), ...(m.kind === "round" ? [] : INTENDED_FROM_HISTOGRAMS)],
    ...(m.exact === null ? {} : { request_details: m.exact.files }),
  }),
} as const satisfies Record<Exclude<KeyName, "run" | "schema_version">, Rule>;

/**
 * The inputs' evidence as one: samples and requests add up, the load was carried and the cache proven only where
 * every input's was, and every input run is listed. Absent when an input has none (written before 0.4).
 */
function mergedEvidence(lines: readonly MergeLine[]): LineEvidence | undefined {
  const es = lines.map(evidenceOf);
  if (es.some((e) => e === null)) return undefined;
  const all = es as LineEvidence[];
  const add = (f: (e: LineEvidence) => number) => sum(all.map(f));
  const addOrNull = (f: (e: LineEvidence) => number | null) => (all.every((e) => f(e) !== null) ? sum(all.map((e) => f(e)!)) : null);
  return {
    samples: {
      ttft: add((e) => e.samples.ttft),
      tpot: add((e) => e.samples.tpot),
      itl: add((e) => e.samples.itl),
      e2e: add((e) => e.samples.e2e),
      from_intended: add((e) => e.samples.from_intended),
      schedule_lag: add((e) => e.samples.schedule_lag),
      ...(all.every((e) => e.samples.fidelity !== undefined) ? { fidelity: add((e) => e.samples.fidelity!) } : {}),
      ...(all.every((e) => e.samples.ledger !== undefined) ? { ledger: add((e) => e.samples.ledger!) } : {}),
    },
    requests: { planned: add((e) => e.requests.planned), sent: add((e) => e.requests.sent), finished: add((e) => e.requests.finished) },
    complete: all.every((e) => e.complete),
    load: {
      offered_request_rate: addOrNull((e) => e.load.offered_request_rate),
      achieved_request_rate: addOrNull((e) => e.load.achieved_request_rate),
      offered_concurrency: addOrNull((e) => e.load.offered_concurrency),
      achieved_concurrency: addOrNull((e) => e.load.achieved_concurrency),
      sustained: allOf(all.map((e) => e.load.sustained)),
    },
    cache: {
      flush_proven: allOf(all.map((e) => e.cache.flush_proven)),
      warm_proven: allOf(all.map((e) => e.cache.warm_proven)),
      per_request: worstStatus(all.map((e) => e.cache.per_request)),
    },
    client_healthy: all.every((e) => e.client_healthy),
    run_ids: lines.flatMap((l) => runIdsOf(l)),
  };
}

/** The runs' fingerprints as one: sizes add up, and the seeds and prompt hashes of the runs are listed. */
function mergedWorkload(lines: readonly MergeLine[]): WorkloadFingerprint {
  const ws = lines.map((l) => l.workload);
  if (ws.some((w) => w === undefined || w === null))
    throw new UsageError("merge: every line needs its workload fingerprint (files written by warmbench 0.2 or later)");
  const all = ws as WorkloadFingerprint[];
  const first = all[0]!;
  return {
    ...first,
    num_prompts: sum(all.map((w) => w.num_prompts)),
    max_concurrency: sum(all.map((w) => w.max_concurrency)),
    seed: all.map((w) => w.seed).join("+"),
    prompt_ids_hash: all.map((w) => w.prompt_ids_hash).join("+"),
  };
}
