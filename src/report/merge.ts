/**
 * `warmbench merge A.jsonl B.jsonl ... -o M.jsonl`: one result from runs that were not coordinated (several clients
 * started by hand against one server). Lines are paired by pct (in order); counts and token totals add up, and
 * throughputs are taken over the union of the runs' windows. Means and standard deviations are exact (weighted
 * from each line's counts); medians and percentiles come from the merged HDR histograms, so they hold to the
 * histograms' 3 significant digits and are listed under `merged.histogram_derived`.
 */
import { UsageError } from "../errors.ts";
import { decodeHistogram, encodeHistogram, createLatencyHistogram, type Histogram } from "../metrics/histograms.ts";
import { buildPctRecord, SCRIPT_KEYS, type PctRecord } from "../metrics/pct-record.ts";
import type { ErrorEntry, PctHistograms } from "../metrics/summarize.ts";
import type { IntendedHistograms, IntendedMetrics } from "../metrics/intended.ts";
import { fitFromMoments, mergeTtftMoments, type TtftMoments } from "../metrics/ttft-model.ts";
import type { CacheStatus } from "../metrics/cache-check.ts";
import type { CachedTokensByTier } from "../metrics/cache-tiers.ts";
import type { WorkloadFingerprint } from "../metrics/fingerprint.ts";
import type { PctLine } from "../metrics/pct-record.ts";
import { checkSameWork } from "./merge-agree.ts";
import type { RunLines } from "./results-file.ts";

/** A results file's runs, with its name for messages. */
export interface NamedRuns {
  name: string;
  runs: RunLines[];
}


/** Percentile keys taken from the merged histograms. */
const FROM_HISTOGRAMS = [
  "median_ttft_ms", "p90_ttft_ms", "p99_ttft_ms", "median_tpot_ms", "p90_tpot_ms", "p99_tpot_ms",
  "median_itl_ms", "p90_itl_ms", "p99_itl_ms", "median_e2e_latency_ms", "p99_e2e_latency_ms",
];

/** One merged line per pct of the first file; every file must have the same pcts in the same order. */
export function mergeResults(files: NamedRuns[]): PctRecord[] {
  if (files.length < 2) throw new UsageError("merge: expects at least two results files");
  const lineLists = files.map((f) => {
    if (f.runs.length !== 1) throw new UsageError(`merge: ${f.name} holds ${f.runs.length} runs; merge files of one run each`);
    const lines = f.runs[0]!.pcts;
    for (const l of lines) {
      if (typeof l.hdr !== "object" || l.hdr === null) throw new UsageError(`merge: ${f.name} has lines without HDR histograms (not written by warmbench)`);
    }
    return lines;
  });
  const n = lineLists[0]!.length;
  lineLists.forEach((lines, k) => {
    if (lines.length !== n) throw new UsageError(`merge: ${files[k]!.name} has ${lines.length} pct lines, ${files[0]!.name} has ${n}`);
  });
  const out: PctRecord[] = [];
  for (let i = 0; i < n; i++) {
    const group = lineLists.map((lines) => lines[i]!);
    checkSameWork(group, i + 1, files.map((f) => f.name));
    out.push(mergeGroup(group, files.map((f) => f.name)));
  }
  return out;
}

const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
const num = (v: unknown): number => (typeof v === "number" ? v : 0);

/** Exact weighted mean and population std of several (n, mean, std) groups. */
function pooled(parts: { n: number; mean: number; std: number }[]): { mean: number; std: number } {
  const n = sum(parts.map((p) => p.n));
  if (n === 0) return { mean: 0, std: 0 };
  const mean = sum(parts.map((p) => p.n * p.mean)) / n;
  const second = sum(parts.map((p) => p.n * (p.std * p.std + p.mean * p.mean))) / n;
  return { mean, std: Math.sqrt(Math.max(0, second - mean * mean)) };
}

function mergedHistogram(lines: PctLine[], key: keyof PctHistograms | keyof IntendedHistograms): Histogram {
  const h = createLatencyHistogram();
  for (const l of lines) h.add(decodeHistogram(l.hdr![key]!));
  return h;
}

/** Intended-time keys taken from the merged histograms. */
const INTENDED_FROM_HISTOGRAMS = [
  "ttft_from_intended_median_ms", "ttft_from_intended_p90_ms", "ttft_from_intended_p99_ms",
  "e2e_from_intended_median_ms", "e2e_from_intended_p90_ms", "e2e_from_intended_p99_ms",
  "schedule_lag_median_ms", "schedule_lag_p90_ms", "schedule_lag_p99_ms",
];

/**
 * The intended-time figures of the union: means exact (weighted by each line's count), the rest from the merged
 * histograms, the achieved rates added up (the runs sent side by side). Lines written before these figures existed
 * were closed loops, where a request's intended time is its send time: their script TTFT and E2E stand in, with no
 * schedule lag.
 */
function mergedIntended(
  lines: PctLine[],
  script: { ttft: Histogram; e2e: Histogram; ttftMeanMs: number; e2eMeanMs: number },
): { metrics: IntendedMetrics; hdr: IntendedHistograms } {
  const hdrKeys = ["ttft_from_intended_us", "e2e_from_intended_us", "schedule_lag_us"] as const;
  if (!lines.every((l) => hdrKeys.every((k) => typeof l.hdr?.[k] === "string"))) {
    const lagFree = { schedule_lag_mean_ms: 0, schedule_lag_median_ms: 0, schedule_lag_p90_ms: 0, schedule_lag_p99_ms: 0 };
    const { ttft, e2e } = script;
    return {
      metrics: {
        achieved_request_rate: null,
        ttft_from_intended_mean_ms: script.ttftMeanMs,
        ttft_from_intended_median_ms: pctMs(ttft, 50), ttft_from_intended_p90_ms: pctMs(ttft, 90), ttft_from_intended_p99_ms: pctMs(ttft, 99),
        e2e_from_intended_mean_ms: script.e2eMeanMs,
        e2e_from_intended_median_ms: pctMs(e2e, 50), e2e_from_intended_p90_ms: pctMs(e2e, 90), e2e_from_intended_p99_ms: pctMs(e2e, 99),
        ...lagFree,
      },
      // Every file's requests, as the script figures above: not the first file's histograms alone.
      hdr: { ttft_from_intended_us: encodeHistogram(ttft), e2e_from_intended_us: encodeHistogram(e2e), schedule_lag_us: encodeHistogram(createLatencyHistogram()) },
    };
  }
  const h = {
    ttft: mergedHistogram(lines, "ttft_from_intended_us"),
    e2e: mergedHistogram(lines, "e2e_from_intended_us"),
    lag: mergedHistogram(lines, "schedule_lag_us"),
  };
  const mean = (key: "ttft_from_intended_mean_ms" | "e2e_from_intended_mean_ms" | "schedule_lag_mean_ms", count: (l: PctLine) => number) =>
    pooled(lines.map((l) => ({ n: count(l), mean: num(l[key]), std: 0 }))).mean;
  const rates = lines.map((l) => l.achieved_request_rate);
  return {
    metrics: {
      achieved_request_rate: rates.every((r) => typeof r === "number") ? sum(rates as number[]) : null,
      ttft_from_intended_mean_ms: mean("ttft_from_intended_mean_ms", (l) => l.completed),
      ttft_from_intended_median_ms: pctMs(h.ttft, 50), ttft_from_intended_p90_ms: pctMs(h.ttft, 90), ttft_from_intended_p99_ms: pctMs(h.ttft, 99),
      e2e_from_intended_mean_ms: mean("e2e_from_intended_mean_ms", (l) => l.completed),
      e2e_from_intended_median_ms: pctMs(h.e2e, 50), e2e_from_intended_p90_ms: pctMs(h.e2e, 90), e2e_from_intended_p99_ms: pctMs(h.e2e, 99),
      schedule_lag_mean_ms: mean("schedule_lag_mean_ms", (l) => num(l.sent ?? l.completed)),
      schedule_lag_median_ms: pctMs(h.lag, 50), schedule_lag_p90_ms: pctMs(h.lag, 90), schedule_lag_p99_ms: pctMs(h.lag, 99),
    },
    hdr: { ttft_from_intended_us: encodeHistogram(h.ttft), e2e_from_intended_us: encodeHistogram(h.e2e), schedule_lag_us: encodeHistogram(h.lag) },
  };
}

/** An HDR percentile in ms (the histograms hold µs); 0 for an empty one, as the script's `xs or 0`. */
const pctMs = (h: Histogram, q: number): number => (h.totalCount === 0 ? 0 : h.getValueAtPercentile(q) / 1000);

function mergeGroup(lines: PctLine[], files: string[]): PctRecord {
  const first = lines[0]!;
  const starts = lines.map((l) => Date.parse(String(l.started_at ?? "")));
  const ends = lines.map((l, k) => starts[k]! + l.benchmark_duration * 1000);
  const windowS = starts.every(Number.isFinite) ? (Math.max(...ends) - Math.min(...starts)) / 1000 : Math.max(...lines.map((l) => l.benchmark_duration));
  const completed = sum(lines.map((l) => l.completed));
  const totalInput = sum(lines.map((l) => l.total_input));
  const totalOutput = sum(lines.map((l) => l.total_output));
  const totalRetok = sum(lines.map((l) => l.total_output_retokenized));
  const h = {
    ttft: mergedHistogram(lines, "ttft_us"),
    tpot: mergedHistogram(lines, "tpot_us"),
    itl: mergedHistogram(lines, "itl_us"),
    e2e: mergedHistogram(lines, "e2e_latency_us"),
  };
  const stats = (series: "ttft" | "tpot" | "itl", count: (l: PctLine) => number) => {
    const p = pooled(lines.map((l) => ({ n: count(l), mean: num(l[`mean_${series}_ms`]), std: num(l[`std_${series}_ms`]) })));
    const hist = h[series];
    return { mean: p.mean, median: pctMs(hist, 50), std: p.std, p90: pctMs(hist, 90), p99: pctMs(hist, 99) };
  };
  const countOf = (key: keyof PctHistograms) => (l: PctLine) => decodeHistogram(l.hdr![key]).totalCount;
  const ttft = stats("ttft", (l) => l.completed);
  const tpot = stats("tpot", countOf("tpot_us"));
  const itl = stats("itl", countOf("itl_us"));
  const e2e = pooled(lines.map((l) => ({ n: l.completed, mean: l.mean_e2e_latency_ms, std: l.std_e2e_latency_ms })));
  const script = {
    backend: first.backend, dataset_name: first.dataset_name, request_rate: first.request_rate,
    max_concurrency: sum(lines.map((l) => l.max_concurrency)), shared_prefix_pct: first.shared_prefix_pct, prefix_len: first.prefix_len,
    suffix_len: first.suffix_len, total_tokens: first.total_tokens, num_prompts: sum(lines.map((l) => l.num_prompts)),
    output_len: first.output_len, completed, benchmark_duration: windowS, total_input: totalInput, total_output: totalOutput,
    total_output_retokenized: totalRetok, request_throughput: completed / windowS, input_throughput: totalInput / windowS,
    output_throughput: totalOutput / windowS, output_throughput_retokenized: totalRetok / windowS,
    total_throughput: (totalInput + totalOutput) / windowS, total_throughput_retokenized: (totalInput + totalRetok) / windowS,
    mean_ttft_ms: ttft.mean, median_ttft_ms: ttft.median, std_ttft_ms: ttft.std, p90_ttft_ms: ttft.p90, p99_ttft_ms: ttft.p99,
    mean_tpot_ms: tpot.mean, median_tpot_ms: tpot.median, std_tpot_ms: tpot.std, p90_tpot_ms: tpot.p90, p99_tpot_ms: tpot.p99,
    mean_itl_ms: itl.mean, median_itl_ms: itl.median, std_itl_ms: itl.std, p90_itl_ms: itl.p90, p99_itl_ms: itl.p99,
    mean_e2e_latency_ms: e2e.mean, median_e2e_latency_ms: pctMs(h.e2e, 50), std_e2e_latency_ms: e2e.std,
    p99_e2e_latency_ms: pctMs(h.e2e, 99), concurrency: (e2e.mean * completed) / 1000 / windowS,
  };
  void SCRIPT_KEYS;
  let moments: TtftMoments | null = null;
  for (const l of lines) moments = mergeTtftMoments(moments, (l.ttft_fit as TtftMoments | null | undefined) ?? null);
  const reported = lines.filter((l) => typeof l.mean_cached_tokens === "number");
  const intended = mergedIntended(lines, { ttft: h.ttft, e2e: h.e2e, ttftMeanMs: ttft.mean, e2eMeanMs: e2e.mean });
  const weight = (l: PctLine) => l.completed;
  const record = buildPctRecord(script, {
    run_id: `merged-${lines.map((l) => l.run_id ?? "x").join("+")}`.slice(0, 64),
    // Gates judged each run; the merged line is judged afresh by whoever reads it (compare, report).
    gates: [],
    workload: mergedWorkload(lines),
    sent: sum(lines.map((l) => num(l.sent))),
    failed: sum(lines.map((l) => num(l.failed))),
    errors: mergeErrors(lines.flatMap((l) => (l.errors as ErrorEntry[] | undefined) ?? [])),
    errors_by_kind: addCounts(lines.map((l) => (l.errors_by_kind as Record<string, number> | undefined) ?? {})),
    interrupted: lines.some((l) => l.interrupted === true),
    burstiness: (first.burstiness as number | null | undefined) ?? null,
    duration_limit_s: (first.duration_limit_s as number | null | undefined) ?? null,
    ...intended.metrics,
    page_size: num(first.page_size),
    expected_cached_tokens: num(first.expected_cached_tokens),
    mean_cached_tokens: reported.length ? sum(reported.map((l) => num(l.mean_cached_tokens) * weight(l))) / sum(reported.map(weight)) : null,
    min_cached_tokens: reported.length ? Math.min(...reported.map((l) => num(l.min_cached_tokens))) : null,
    max_cached_tokens: reported.length ? Math.max(...reported.map((l) => num(l.max_cached_tokens))) : null,
    cached_tokens_mismatched: reported.length ? sum(reported.map((l) => num(l.cached_tokens_mismatched))) : null,
    cached_tokens_counts: topCounts(lines.flatMap((l) => (l.cached_tokens_counts as [number, number][] | undefined) ?? [])),
    expected_hit_ratio: num(first.expected_hit_ratio),
    observed_hit_ratio: reported.length ? sum(reported.map((l) => num(l.observed_hit_ratio) * weight(l))) / sum(reported.map(weight)) : null,
    server_cache_hit_rate: null,
    working_set: num(first.working_set ?? 1),
    working_set_tokens: num(first.working_set_tokens ?? first.prefix_len),
    cache_capacity_tokens: (first.cache_capacity_tokens as number | null | undefined) ?? null,
    host_cache_capacity_tokens: (first.host_cache_capacity_tokens as number | null | undefined) ?? null,
    working_set_fits: (first.working_set_fits as boolean | null | undefined) ?? null,
    cache_shortfall_requests: lines.every((l) => typeof l.cache_shortfall_requests === "number") ? sum(lines.map((l) => num(l.cache_shortfall_requests))) : null,
    eviction: lines.some((l) => l.eviction === true) ? true : lines.every((l) => l.eviction === false) ? false : null,
    cached_tokens_by_tier: sumTiers(lines.map((l) => (l.cached_tokens_by_tier as CachedTokensByTier | null | undefined) ?? null)),
    // Per-tier medians and p99s of several runs cannot be combined without their samples.
    ttft_by_tier: null,
    cache_check: worstStatus(lines.map((l) => (l.cache_check as CacheStatus | undefined) ?? "off")),
    flushed: lines.every((l) => l.flushed === true),
    flush_attempts: sum(lines.map((l) => num(l.flush_attempts))),
    flush_verified: allOf(lines.map((l) => l.flush_verified)),
    flush_probe_cached_tokens: null,
    warm_verified: allOf(lines.map((l) => l.warm_verified)),
    warm_cached_tokens: null,
    client_loop_lag_p99_ms: Math.max(...lines.map((l) => num(l.client_loop_lag_p99_ms))),
    client_loop_lag_max_ms: Math.max(...lines.map((l) => num(l.client_loop_lag_max_ms))),
    client_own_lag_p99_ms: Math.max(...lines.map((l) => num(l.client_own_lag_p99_ms))),
    client_js_cpu_pct: Math.max(...lines.map((l) => num(l.client_js_cpu_pct))),
    client_http_cpu_pct: null,
    client_cpu_pct: Math.max(...lines.map((l) => num(l.client_cpu_pct))),
    client_saturated: lines.some((l) => l.client_saturated === true),
    shards: null,
    ttft_fit: moments,
    ttft_model: fitFromMoments(moments),
    hdr: {
      ttft_us: encodeHistogram(h.ttft), tpot_us: encodeHistogram(h.tpot), itl_us: encodeHistogram(h.itl), e2e_latency_us: encodeHistogram(h.e2e),
      ...intended.hdr,
    },
    hdr_unit: "us",
    warmbench_version: String(first.warmbench_version ?? ""),
    started_at: new Date(Math.min(...starts.filter(Number.isFinite))).toISOString(),
    model: String(first.model ?? ""),
    tokenizer: String(first.tokenizer ?? ""),
    population_size: num(first.population_size),
    seed: String(first.seed ?? ""),
    base_url: String(first.base_url ?? ""),
    server_version: (first.server_version as string | null | undefined) ?? null,
    text_mode: first.text_mode === "incremental" ? "incremental" : "cumulative",
    prompt_encoding: first.prompt_encoding === "text" ? "text" : "token_ids",
    prompt_drift: null,
    merged: { files, run_ids: lines.map((l) => l.run_id ?? null), histogram_derived: [...FROM_HISTOGRAMS, ...INTENDED_FROM_HISTOGRAMS] },
  });
  return record;
}

/** The runs' fingerprints as one: sizes add up, and the seeds and prompt hashes of the runs are listed. */
function mergedWorkload(lines: PctLine[]): WorkloadFingerprint {
  const ws = lines.map((l) => l.workload);
  if (ws.some((w) => w === undefined || w === null)) throw new UsageError("merge: every line needs its workload fingerprint (files written by warmbench 0.2 or later)");
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

/** Tokens per tier added up; null when any run lacks the breakdown. */
function sumTiers(tiers: (CachedTokensByTier | null)[]): CachedTokensByTier | null {
  if (tiers.some((t) => t === null)) return null;
  const ts = tiers as CachedTokensByTier[];
  return { device: sum(ts.map((t) => t.device)), host: sum(ts.map((t) => t.host)), storage: sum(ts.map((t) => t.storage)) };
}

function mergeErrors(entries: ErrorEntry[]): ErrorEntry[] {
  const byKey = new Map<string, ErrorEntry>();
  for (const e of entries) {
    const key = `${e.kind}\u0000${e.message}`;
    const seen = byKey.get(key);
    if (seen) seen.count += e.count;
    else byKey.set(key, { ...e });
  }
  return [...byKey.values()].sort((a, b) => b.count - a.count).slice(0, 20);
}

function addCounts(maps: Record<string, number>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of maps) for (const [k, v] of Object.entries(m)) out[k] = (out[k] ?? 0) + v;
  return out;
}

function topCounts(pairs: [number, number][]): [number, number][] {
  const m = new Map<number, number>();
  for (const [value, count] of pairs) m.set(value, (m.get(value) ?? 0) + count);
  return [...m.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, 10);
}

function worstStatus(statuses: CacheStatus[]): CacheStatus {
  for (const s of ["mismatch", "unreported", "ok"] as const) if (statuses.includes(s)) return s;
  return "off";
}

function allOf(values: unknown[]): boolean | null {
  if (values.some((v) => v === false)) return false;
  return values.every((v) => v === true) ? true : null;
}
