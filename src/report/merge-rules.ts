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
import { KEYS, type KeyName, type MergeRule } from "../schema/key-table.ts";
import type { LatencyStats } from "../metrics/script-metrics.ts";
import type { DetailSample } from "./merge-details.ts";
import { peakInFlight, peakSumOrNull, unionLengthS, type Span } from "./merge-load.ts";
import type { LineEvidence } from "../schema/nested.ts";
import { evidenceOf, runIdsOf } from "../metrics/evidence-check.ts";
import type { RoundRecord, SweepRecord } from "../schema/lines.ts";
import type { LineKind } from "../schema/key-table.ts";
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
  /** The union of the runs' windows, s: the time some run was measuring. */
  windowS: number;
  /** Each line's own window; null when a line says no start (its load is then added up, as before). */
  spans: Span[] | null;
  /** Every request of the union, send to last byte, from the request details; null without them. */
  inFlight: Span[] | null;
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

/** Each line's own window (its start and its duration: first send to last event); null when a line says no start. */
function windowsOf(lines: readonly MergeLine[]): Span[] | null {
  const spans: Span[] = [];
  for (const l of lines) {
    const start = Date.parse(String(l.started_at ?? ""));
    if (!Number.isFinite(start)) return null;
    spans.push({ startMs: start, endMs: start + num(l.benchmark_duration) * 1000 });
  }
  return spans;
}

/** Every request of the union as a span (send to last byte), or null unless every line's details say when each was sent. */
function requestSpans(samples: readonly (readonly DetailSample[])[] | null): Span[] | null {
  if (samples === null) return null;
  const all = samples.flat();
  if (all.some((s) => s.startEpochMs === null)) return null;
  return all.map((s) => ({ startMs: s.startEpochMs!, endMs: s.startEpochMs! + Math.max(0, s.latencyMs) }));
}

export function mergingOf(
  lines: readonly MergeLine[],
  files: readonly string[],
  kind: LineKind,
  exact: Merging["exact"] = null,
  samples: readonly (readonly DetailSample[])[] | null = null,
): Merging {
  const first = lines[0]!;
  const starts = lines.map((l) => Date.parse(String(l.started_at ?? "")));
  const spans = windowsOf(lines);
  // Over the time some run was measuring: two runs one after the other are not one run twice as long.
  const windowS = spans !== null ? unionLengthS(spans) : Math.max(...lines.map((l) => num(l.benchmark_duration)));
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
    spans,
    inFlight: requestSpans(samples),
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
    intended: () => {
      if (intended === undefined) {
        intended = mergedIntended(lines, { ttft: h.ttft, e2e: h.e2e, ttftMeanMs: m.stats.ttft.mean, e2eMeanMs: m.stats.e2e.mean, exact: exact?.stats ?? null });
      }
      return intended;
    },
  };
  let intended: ReturnType<typeof mergedIntended> | undefined;
  return m;
}

type Rule = (m: Merging) => unknown;
type Keys = typeof KEYS;
/** The keys whose key-table entry names merge rule R (KeyDef.merge). */
type KeysMergedBy<R extends MergeRule> = { [N in KeyName]: Keys[N]["merge"] extends R ? N : never }[KeyName];

/** Exact from the request details when merge has them; else pooled means and histogram percentiles; null without a sample. */
const latency = (key: keyof LatencyStats): Rule => {
  const which = key.slice(0, key.indexOf("_")) as keyof Stats;
  const series = (Object.keys(STEM) as Series[]).find((s) => key === `${which}_${STEM[s]}_ms`)!;
  return (m) => {
    if (m.exact !== null) return m.exact.stats[key];
    return m.h[series].totalCount === 0 ? null : m.stats[series][which];
  };
};
const total = (key: "total_input" | "total_output" | "total_output_retokenized") => (m: Merging) => sum(m.lines.map((l) => num(l[key])));
/** What each throughput counts, added up over the runs (per second of the union's window). */
const PER_SECOND: { readonly [N in KeysMergedBy<"per-second">]: (m: Merging) => number } = {
  request_throughput: (m) => m.completed,
  input_throughput: total("total_input"),
  output_throughput: total("total_output"),
  output_throughput_retokenized: total("total_output_retokenized"),
  total_throughput: (m) => total("total_input")(m) + total("total_output")(m),
  total_throughput_retokenized: (m) => total("total_input")(m) + total("total_output_retokenized")(m),
};
/** The ledger's loss a ratio is of. */
const LOSS_OF = {
  loss_routing_ratio: "loss_routing_tokens",
  loss_eviction_ratio: "loss_eviction_tokens",
  loss_engine_ratio: "loss_engine_tokens",
} as const satisfies { readonly [N in KeysMergedBy<"ledger-ratio">]: KeyName };
/** Not known for the union: a figure of the server's over each run's own window, or of samples merge does not have. */
const unknown: Rule = () => null;

/** A sweep's runs rotate the same prefixes; each multi-turn run adds its own conversations' histories. */
const workingSetTokens = (m: Merging): number =>
  m.kind === "round" ? sum(m.lines.map((l) => num(l.working_set_tokens))) : num(m.first.working_set_tokens ?? m.first.prefix_len);

/**
 * Each merge rule of the key table (key-table.ts MERGE_RULES, which says what each does) for the keys that name it:
 * a rule's code must compile for every one of its keys (a key naming "latency" must be a latency statistic...).
 */
const BY_RULE: { readonly [R in Exclude<MergeRule, "none">]: (key: KeysMergedBy<R>) => Rule } = {
  first: (key) => (m) => m.first[key],
  "first-or-null": (key) => (m) => m.first[key] ?? null,
  "first-number": (key) => (m) => num(m.first[key]),
  text: (key) => (m) => String(m.first[key] ?? ""),
  sum: (key) => (m) => sum(m.lines.map((l) => num(l[key]))),
  "sum-or-null": (key) => (m) => (m.lines.every((l) => typeof l[key] === "number") ? sum(m.lines.map((l) => num(l[key]))) : null),
  // A count no input had a sample for stays null (fidelity_diverged where nothing was compared), never 0.
  "sum-where-carried": (key) => (m) =>
    m.first[key] === undefined ? undefined : m.lines.every((l) => l[key] === null) ? null : sum(m.lines.map((l) => num(l[key]))),
  "null-where-carried": (key) => (m) => (m.first[key] === undefined ? undefined : null),
  "per-second": (key) => (m) => PER_SECOND[key](m) / m.windowS,
  latency,
  "from-intended": (key) => (m) => m.intended().metrics[key],
  // A cache figure reported per request: over the lines that reported any, weighted by their requests.
  "reported-mean": (key) => (m) => (m.reported.length ? sum(m.reported.map((l) => num(l[key]) * m.weight(l))) / sum(m.reported.map(m.weight)) : null),
  "ledger-ratio": (key) => (m) => {
    const loss = LOSS_OF[key];
    if (m.first[loss] === undefined) return undefined;
    const available = sum(m.lines.map((l) => num(l.ledger_available_tokens)));
    return available > 0 ? sum(m.lines.map((l) => num(l[loss]))) / available : null;
  },
  max: (key) => (m) => Math.max(...m.lines.map((l) => num(l[key]))),
  any: (key) => (m) => m.lines.some((l) => l[key] === true),
  "all-or-null": (key) => (m) => allOf(m.lines.map((l) => l[key])),
  unknown: () => unknown,
  own: (key) => OWN_RULES[key],
};

/** The keys whose rule is their own (merge: "own" in the key table): exactly those, the compiler holds it both ways. */
const OWN_RULES: { readonly [N in KeysMergedBy<"own">]: Rule } = {
  working_set: (m) => num(m.first.working_set ?? 1),
  // The fidelity check's positions are every run's; the largest gap is the largest; the notes, every distinct one.
  fidelity_first_divergence: (m) =>
    m.first.fidelity_first_divergence === undefined
      ? undefined
      : m.lines.flatMap((l) => (Array.isArray(l.fidelity_first_divergence) ? l.fidelity_first_divergence : [])).sort((a, b) => a - b),
  fidelity_max_gap_nats: (m) => {
    if (m.first.fidelity_max_gap_nats === undefined) return undefined;
    const gaps = m.lines.flatMap((l) => (typeof l.fidelity_max_gap_nats === "number" ? [l.fidelity_max_gap_nats] : []));
    return gaps.length > 0 ? Math.max(...gaps) : null;
  },
  // The servers' telemetry, where the lines carry it. A peak of the union is the largest peak; a mean queue, each
  // run's mean over its own window weighted by that window; disagreements add up, and stay null unless every run
  // reconciled. Preemptions per request stay unknown: runs side by side against one server each count all of its
  // preemptions, so no sum or mean of theirs is the union's.
  server_kv_usage_peak: (m) => {
    if (m.first.server_kv_usage_peak === undefined) return undefined;
    const peaks = m.lines.flatMap((l) => (typeof l.server_kv_usage_peak === "number" ? [l.server_kv_usage_peak] : []));
    return peaks.length > 0 ? Math.max(...peaks) : null;
  },
  server_queue_mean: (m) =>
    m.first.server_queue_mean === undefined
      ? undefined
      : weightedOrNull(
          m.lines.map((l) => l.server_queue_mean),
          m.lines.map((l) => num(l.benchmark_duration)),
        ),
  server_counters_disagree: (m) =>
    m.first.server_counters_disagree === undefined
      ? undefined
      : m.lines.every((l) => typeof l.server_counters_disagree === "number")
        ? sum(m.lines.map((l) => num(l.server_counters_disagree)))
        : null,
  fidelity_note: (m) => {
    if (m.first.fidelity_note === undefined) return undefined;
    const notes = [...new Set(m.lines.flatMap((l) => (typeof l.fidelity_note === "string" ? [l.fidelity_note] : [])))];
    return notes.length > 0 ? notes.join("; ") : null;
  },

  // What the runs sent side by side adds up, over the union of their windows.
  completed: (m) => m.completed,
  benchmark_duration: (m) => m.windowS,
  concurrency: (m) => (m.completed === 0 ? 0 : (m.stats.e2e.mean * m.completed) / 1000 / m.windowS),

  run_id: (m) => `merged-${m.lines.map((l) => l.run_id ?? "x").join("+")}`.slice(0, 64),
  // Gates judged each run; the merged line is judged afresh by whoever reads it (compare, report).
  gates: () => [],
  workload: (m) => mergedWorkload(m),
  max_concurrency: (m) =>
    unionPeak(
      m,
      m.lines.map((l) => num(l.max_concurrency)),
    ),
  errors: (m) => mergeErrors(m.lines.flatMap((l) => (l.errors as ErrorEntry[] | undefined) ?? [])),
  errors_by_kind: (m) => addCounts(m.lines.map((l) => l.errors_by_kind ?? {})),
  mean_prompt_len: (m) =>
    weightedOrNull(
      m.lines.map((l) => l.mean_prompt_len),
      m.lines.map((l) => num(l.completed)),
    ),
  max_prompt_len: (m) => (m.lines.some((l) => typeof l.max_prompt_len === "number") ? Math.max(...m.lines.map((l) => num(l.max_prompt_len))) : null),

  // The prefix cache. A sweep line expects the same cached tokens of each request; a round line sums its turns'.
  expected_cached_tokens: (m) => (m.kind === "round" ? sum(m.lines.map((l) => num(l.expected_cached_tokens))) : num(m.first.expected_cached_tokens)),
  observed_cached_tokens: (m) => sumOrNull(m.lines.map((l) => l.observed_cached_tokens)),
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
  working_set_tokens: (m) => workingSetTokens(m),
  working_set_fits: (m) => {
    const capacity = m.first.cache_capacity_tokens;
    if (m.kind !== "round") return m.first.working_set_fits ?? null;
    return typeof capacity === "number" ? workingSetTokens(m) <= capacity : null;
  },
  eviction: (m) => (m.lines.some((l) => l.eviction === true) ? true : m.lines.every((l) => l.eviction === false) ? false : null),
  cached_tokens_by_tier: (m) => sumTiers(m.lines.map((l) => (l.cached_tokens_by_tier as CachedTokensByTier | null | undefined) ?? null)),
  cache_check: (m) => worstStatus(m.lines.map((l) => (l.cache_check as CacheStatus | undefined) ?? "off")),
  flushed: (m) => m.lines.every((l) => l.flushed === true),

  ttft_fit: (m) => m.moments,
  ttft_model: (m) => fitFromMoments(m.moments),
  hdr: (m) => ({
    ttft_us: encodeHistogram(m.h.ttft),
    tpot_us: encodeHistogram(m.h.tpot),
    itl_us: encodeHistogram(m.h.itl),
    e2e_latency_us: encodeHistogram(m.h.e2e),
    ...(m.kind === "round" ? {} : m.intended().hdr),
  }),
  hdr_unit: () => "us",

  started_at: (m) => new Date(Math.min(...m.starts.filter(Number.isFinite))).toISOString(),
  text_mode: (m) => (m.first.text_mode === "incremental" ? "incremental" : "cumulative"),
  prompt_encoding: (m) => (m.first.prompt_encoding === "text" ? "text" : "token_ids"),
  evidence: (m) => mergedEvidence(m),
  merged: (m) => ({
    files: m.files,
    run_ids: m.lines.map((l) => l.run_id ?? null),
    histogram_derived: [...(m.exact === null ? FROM_HISTOGRAMS : []), ...(m.kind === "round" ? [] : INTENDED_FROM_HISTOGRAMS)],
    ...(m.exact === null ? {} : { request_details: m.exact.files }),
  }),
};

/** The keys whose rule the compiler checked above: each names exactly one rule (a `merge` typed wider would escape). */
type Ruled = { [R in MergeRule]: KeysMergedBy<R> }[MergeRule];
type MergedKey = Exclude<Ruled, KeysMergedBy<"none">>;

/**
 * How each key of a merged line is made: the rule its key-table entry names (KeyDef.merge). Every key but those merge
 * writes itself (merge: "none": run, schema_version); merge.ts asks this of every other key of the kind, so a key
 * whose rule the compiler could not check does not compile there.
 */
export const RULES = Object.fromEntries(
  (Object.keys(KEYS) as KeyName[]).flatMap((key) => {
    const rule: MergeRule = KEYS[key].merge;
    // BY_RULE[rule] takes exactly the keys that name `rule`, and `key` is one (KEYS[key].merge is `rule`).
    return rule === "none" ? [] : [[key, (BY_RULE[rule] as (key: KeyName) => Rule)(key)]];
  }),
) as { readonly [N in MergedKey]: Rule };

/**
 * The inputs' evidence as one: samples and requests add up, the load was carried and the cache proven only where
 * every input's was, and every input run is listed. Absent when an input has none (written before 0.4).
 */
function mergedEvidence(m: Merging): LineEvidence | undefined {
  const lines = m.lines;
  const es = lines.map(evidenceOf);
  if (es.some((e) => e === null)) return undefined;
  const all = es as LineEvidence[];
  const add = (f: (e: LineEvidence) => number) => sum(all.map(f));
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
    load: mergedLoad(m, all),
    cache: {
      flush_proven: allOf(all.map((e) => e.cache.flush_proven)),
      warm_proven: allOf(all.map((e) => e.cache.warm_proven)),
      per_request: worstStatus(all.map((e) => e.cache.per_request)),
    },
    client_healthy: all.every((e) => e.client_healthy),
    run_ids: lines.flatMap((l) => runIdsOf(l)),
  };
}

/**
 * A load of each run, as the union carried it: the most in force at one instant (runs that never overlapped do not
 * add up); without the runs' windows, added up as before.
 */
function unionPeak(m: Merging, values: readonly (number | null)[]): number | null {
  if (m.spans === null) return values.every((v) => v !== null) ? sum(values as number[]) : null;
  return peakSumOrNull(m.spans, values);
}

/**
 * The union's load: offered is the most offered at one instant; achieved concurrency the requests truly in flight at
 * once (from the request details; else the most the runs achieved side by side); sustained where every run carried
 * its own and, in a closed loop, the union held what it offered.
 */
function mergedLoad(m: Merging, all: readonly LineEvidence[]): LineEvidence["load"] {
  const offeredConcurrency = unionPeak(
    m,
    all.map((e) => e.load.offered_concurrency),
  );
  const achievedConcurrency =
    m.inFlight !== null
      ? peakInFlight(m.inFlight)
      : unionPeak(
          m,
          all.map((e) => e.load.achieved_concurrency),
        );
  const sent = sum(all.map((e) => e.requests.sent));
  const each = allOf(all.map((e) => e.load.sustained));
  const held = offeredConcurrency === null || achievedConcurrency === null || achievedConcurrency >= Math.min(offeredConcurrency, sent);
  return {
    offered_request_rate: unionPeak(
      m,
      all.map((e) => e.load.offered_request_rate),
    ),
    achieved_request_rate: unionPeak(
      m,
      all.map((e) => e.load.achieved_request_rate),
    ),
    offered_concurrency: offeredConcurrency,
    achieved_concurrency: achievedConcurrency,
    sustained: each === null ? null : each && held,
  };
}

/** The runs' fingerprints as one: sizes add up, and the seeds and prompt hashes of the runs are listed. */
function mergedWorkload(m: Merging): WorkloadFingerprint {
  const lines = m.lines;
  const ws = lines.map((l) => l.workload);
  if (ws.some((w) => w === undefined || w === null))
    throw new UsageError("merge: every line needs its workload fingerprint (files written by warmbench 0.2 or later)");
  const all = ws as WorkloadFingerprint[];
  const first = all[0]!;
  return {
    ...first,
    num_prompts: sum(all.map((w) => w.num_prompts)),
    max_concurrency: unionPeak(
      m,
      all.map((w) => w.max_concurrency),
    )!,
    seed: all.map((w) => w.seed).join("+"),
    prompt_ids_hash: all.map((w) => w.prompt_ids_hash).join("+"),
  };
}
