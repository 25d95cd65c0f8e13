/**
 * What `compare` compares: latency percentiles as the lines hold them (numpy's, the values gates judge), from the HDR
 * histograms only where a line holds none (p99.9), means and throughputs from the lines (sweep or round lines: the keys mean the same);
 * each knows which side is better.
 */
import { HDR_PERCENTILES, HDR_SERIES, linePercentileMs, type HdrSeries } from "../report/hdr-stats.ts";
import type { JudgedMetric } from "../metrics/evidence-check.ts";
import type { SampleStatistic } from "../metrics/intervals.ts";
import { KEYS, sampleFamilyOf, type KeyDef, type KeyName, type SampleFamily } from "../schema/key-table.ts";
import { kindsOf, numericKeysOf } from "../schema/lines.ts";
import type { LineKind } from "../schema/key-table.ts";
import { field, lineKindOf, type CompareLine } from "./lines.ts";

/** A metric compare reads; as a JudgedMetric, the evidence check asks what it rests on (its samples, its value). */
export interface CompareMetric extends JudgedMetric {
  /** As written in --max-regress and in the table, e.g. p99_ttft_ms. */
  name: string;
  /** The kinds of line it is read from (a capacity line has no latency; a point has no capacity). */
  kinds: readonly LineKind[];
  better: "lower" | "higher";
  /** Shown in the table without a --max-regress limit on it too. */
  shown: boolean;
  /** The value of a line, and whether it came from the HDR histograms. */
  read(line: CompareLine): { value: number | null; source: "hdr" | "line" };
  /**
   * A statistic of the line's per-request samples (its HDR histogram of `series`): the mean, or a percentile. A single
   * run's verdict on it gets the run's own interval, a bootstrap over those samples (within-run.ts). `inverse`: the
   * metric is a throughput, whose noise is that of the mean E2E it is the inverse of (a closed loop's throughput is
   * its concurrency over mean E2E): its interval is the one the E2E interval implies, widened to hold its own change.
   */
  perRequest?: { series: HdrSeries; statistic: SampleStatistic; inverse?: true };
  /**
   * "run": a number of the whole run, not of one line (the TTFT model over all its lines): judged once per pair of
   * runs (cost-model.ts), never per line; `read` and `value` give what one line contributes (its fit's samples).
   */
  scope?: "run";
}

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** Sweep and round lines: the points. */
const POINTS: readonly LineKind[] = ["sweep", "round"];

/** The evidence count each HDR series rests on. */
const SERIES_SAMPLES: Record<HdrSeries, SampleFamily> = { ttft: "ttft", tpot: "tpot", itl: "itl", e2e_latency: "e2e" };

function percentileMetric(series: HdrSeries, p: (typeof HDR_PERCENTILES)[number], shown: boolean): CompareMetric {
  const read = (line: CompareLine) => linePercentileMs(line, series, p.percentile);
  return {
    name: `${p.name}_${series}_ms`,
    kinds: POINTS,
    better: "lower",
    shown,
    read,
    perRequest: { series, statistic: { kind: "percentile", percentile: p.percentile } },
    samples: SERIES_SAMPLES[series],
    value: (line) => read(line as CompareLine).value,
  };
}

const lineMetric = (name: string, better: "lower" | "higher", shown: boolean, kinds = POINTS): CompareMetric => ({
  name,
  kinds,
  better,
  shown,
  read: (line) => ({ value: num(field(line, name)), source: "line" }),
  samples: sampleFamilyOf(name),
  value: (line) => field(line as CompareLine, name),
});

/** A series' mean as the line holds it, with its per-request samples for the run's own interval. */
const meanMetric = (series: HdrSeries): CompareMetric => ({
  ...lineMetric(`mean_${series}_ms`, "lower", true),
  perRequest: { series, statistic: { kind: "mean" } },
});

/** A throughput of the line, its run's own noise that of the line's mean E2E. */
const throughputMetric = (name: string, shown: boolean): CompareMetric => ({
  ...lineMetric(name, "higher", shown),
  perRequest: { series: "e2e_latency", statistic: { kind: "mean" }, inverse: true },
});

/**
 * The TTFT model's fixed overhead and per-token prefill cost (TTFT = fixed + slope x uncached tokens), fitted over
 * every sweep line of a run from their `ttft_fit` moments: a number of the run. Per line, what it rests on is the
 * line's fit (absent or null: the line contributes no sample).
 */
const costModelMetric = (name: string): CompareMetric => ({
  name,
  kinds: ["sweep"],
  better: "lower",
  shown: true,
  scope: "run",
  read: () => ({ value: null, source: "line" }),
  samples: "ttft",
  value: (line) => field(line as CompareLine, "ttft_fit"),
});

/** The names of the TTFT model's judged terms. */
export const COST_MODEL = { fixedMs: "ttft_model_fixed_ms", prefillUsPerToken: "ttft_model_prefill_us_per_token" } as const;

/** Shown by default: every percentile of TTFT and ITL, the tails of TPOT and E2E. */
const SHOWN: Record<HdrSeries, readonly string[]> = {
  ttft: ["p50", "p90", "p99", "p999"],
  itl: ["p50", "p90", "p99", "p999"],
  tpot: ["p99"],
  e2e_latency: ["p99"],
};

/**
 * The keys the key table says which way is better of (schema/key-table.ts `better`): a search's capacity, a
 * throughput (lower is a regression), read from the kinds of line that carry them.
 */
function keyMetrics(): CompareMetric[] {
  return (Object.keys(KEYS) as KeyName[]).flatMap((name) => {
    const better = (KEYS[name] as KeyDef).better;
    return better === undefined ? [] : [lineMetric(name, better, true, kindsOf(name))];
  });
}

/**
 * Every other key a gate may name whose better side is plain (a latency from the intended send, a count of things gone
 * wrong, a loss of the ledger, the fidelity check's counts, a share served from the cache): compare takes a limit on
 * it too, and shows it only where limited. Keys of the workload's shape (total_tokens, num_prompts...) have no
 * better side and take none.
 */
const LOWER_IS_BETTER =
  /^(median|std)_(ttft|tpot|itl|e2e_latency)_ms$|_from_intended_|^schedule_lag_|^(failed|retried_connections|cached_tokens_mismatched|routing_imbalance)$|^cache_(shortfall|short|over)_requests$|^observed_shortfall_tokens$|^loss_|^ledger_(unexplained_tokens|unattributed_requests)$|^fidelity_(diverged|unclassified|unproven|near_tie|max_gap_nats)$|^client_/;
const HIGHER_IS_BETTER =
  /^(observed_hit_ratio|server_cache_hit_rate|mean_cached_tokens|observed_cached_tokens|achieved_request_rate|concurrency|ledger_delivered_tokens)$|^fidelity_(checked|identical)$|_throughput_retokenized$/;

function gateableMetrics(): CompareMetric[] {
  const numeric = new Set([...numericKeysOf("sweep"), ...numericKeysOf("round")]);
  return [...numeric].flatMap((name) => {
    if ((KEYS[name] as KeyDef).better !== undefined) return [];
    const better = LOWER_IS_BETTER.test(name) ? "lower" : HIGHER_IS_BETTER.test(name) ? "higher" : null;
    const kinds = kindsOf(name).filter((k) => POINTS.includes(k));
    return better === null || kinds.length === 0 ? [] : [lineMetric(name, better, false, kinds)];
  });
}

/** The metrics read from a line of its kind. */
export const metricsOf = (line: object): readonly CompareMetric[] => COMPARE_METRICS.filter((m) => m.kinds.includes(lineKindOf(line)));

/** Every metric compare knows, in table order. */
export const COMPARE_METRICS: readonly CompareMetric[] = [
  ...HDR_SERIES.flatMap((series) => [meanMetric(series), ...HDR_PERCENTILES.map((p) => percentileMetric(series, p, SHOWN[series].includes(p.name)))]),
  costModelMetric(COST_MODEL.fixedMs),
  costModelMetric(COST_MODEL.prefillUsPerToken),
  throughputMetric("output_throughput", true),
  throughputMetric("request_throughput", true),
  throughputMetric("total_throughput", false),
  throughputMetric("input_throughput", false),
  ...keyMetrics(),
  ...gateableMetrics(),
];

export const compareMetric = (name: string): CompareMetric | undefined => COMPARE_METRICS.find((m) => m.name === name);
