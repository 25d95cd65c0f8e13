/**
 * What `compare` compares: latency percentiles as the lines hold them (numpy's, the values gates judge), from the HDR
 * histograms only where a line holds none (p99.9), means and throughputs from the lines (sweep or round lines: the keys mean the same);
 * each knows which side is better.
 */
import { HDR_PERCENTILES, HDR_SERIES, linePercentileMs, type HdrSeries } from "../report/hdr-stats.ts";
import type { JudgedMetric } from "../metrics/evidence-check.ts";
import { KEYS, sampleFamilyOf, type KeyDef, type KeyName, type SampleFamily } from "../schema/key-table.ts";
import { kindsOf } from "../schema/lines.ts";
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

/** The metrics read from a line of its kind. */
export const metricsOf = (line: object): readonly CompareMetric[] => COMPARE_METRICS.filter((m) => m.kinds.includes(lineKindOf(line)));

/** Every metric compare knows, in table order. */
export const COMPARE_METRICS: readonly CompareMetric[] = [
  ...HDR_SERIES.flatMap((series) => [
    lineMetric(`mean_${series}_ms`, "lower", true),
    ...HDR_PERCENTILES.map((p) => percentileMetric(series, p, SHOWN[series].includes(p.name))),
  ]),
  lineMetric("output_throughput", "higher", true),
  lineMetric("request_throughput", "higher", true),
  lineMetric("total_throughput", "higher", false),
  lineMetric("input_throughput", "higher", false),
  ...keyMetrics(),
];

export const compareMetric = (name: string): CompareMetric | undefined => COMPARE_METRICS.find((m) => m.name === name);
