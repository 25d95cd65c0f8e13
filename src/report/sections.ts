/**
 * The sections of a multi-run report, each a chart (as plain data, drawn in the HTML page) and the table of its
 * numbers. The Markdown report is the same sections without the charts.
 */
import { hdrCdf, type HdrSeries } from "./hdr-stats.ts";
import type { ReportRun } from "./runs.ts";
import { allPcts, cacheTable, distributionTable, lineAt, modelTable, pctTable, type ReportTable } from "./tables.ts";
import type { PctLine } from "../metrics/pct-record.ts";

export interface Point {
  x: number;
  y: number;
}

/** One drawn series: `series` is the run's index (its colour), -1 for a reference line. */
export interface DatasetData {
  label: string;
  series: number;
  style: "line" | "points" | "fit" | "reference";
  data: Point[];
}

export interface AxisData {
  title: string;
  type: "linear" | "logarithmic";
  min?: number;
  max?: number;
}

/** A chart as the page script draws it. CDF charts hold one set of datasets per pct, switched by a selector. */
export interface ChartData {
  id: string;
  x: AxisData;
  y: AxisData;
  datasets: DatasetData[];
  byPct?: { pcts: number[]; selected: number; datasets: Record<string, DatasetData[]> };
}

export interface ReportSection {
  id: string;
  title: string;
  /** One sentence on how to read it. */
  note: string;
  chart: ChartData;
  table: ReportTable;
}

const PCT_AXIS: AxisData = { title: "shared prefix (%)", type: "linear", min: 0, max: 100 };

/** A metric against pct, one line per run. */
function pctChart(runs: readonly ReportRun[], id: string, yTitle: string, value: (l: PctLine) => number | null | undefined): ChartData {
  return {
    id,
    x: PCT_AXIS,
    y: { title: yTitle, type: "linear", min: 0 },
    datasets: runs.map((r, i) => ({ label: r.label, series: i, style: "line", data: points(r.pcts, (l) => l.shared_prefix_pct, value) })),
  };
}

/** Points of the lines where both coordinates are finite numbers. */
function points(lines: readonly PctLine[], x: (l: PctLine) => number | null | undefined, y: (l: PctLine) => number | null | undefined): Point[] {
  const out: Point[] = [];
  for (const l of lines) {
    const xv = x(l);
    const yv = y(l);
    if (typeof xv === "number" && typeof yv === "number" && Number.isFinite(xv) && Number.isFinite(yv)) out.push({ x: xv, y: yv });
  }
  return out.sort((a, b) => a.x - b.x);
}

function pctSection(runs: readonly ReportRun[], id: string, title: string, note: string, yTitle: string, value: (l: PctLine) => number | null | undefined): ReportSection {
  return { id, title, note, chart: pctChart(runs, id, yTitle, value), table: pctTable(runs, id, title, value) };
}

/** Expected (x) against observed (y) mean cached tokens; points on the diagonal are right. */
function cacheSection(runs: readonly ReportRun[]): ReportSection {
  const datasets: DatasetData[] = runs.map((r, i) => ({
    label: r.label, series: i, style: "points", data: points(r.pcts, (l) => l.expected_cached_tokens, (l) => l.mean_cached_tokens),
  }));
  const top = Math.max(1, ...datasets.flatMap((d) => d.data.flatMap((p) => [p.x, p.y])));
  datasets.push({ label: "observed = expected", series: -1, style: "reference", data: [{ x: 0, y: 0 }, { x: top, y: top }] });
  return {
    id: "cached-tokens",
    title: "Expected vs observed cached tokens",
    note: "Mean cached tokens the server reported per request against the page-aligned prefix it should hold; every point belongs on the diagonal.",
    chart: { id: "cached-tokens", x: { title: "expected cached tokens", type: "linear", min: 0 }, y: { title: "observed mean cached tokens", type: "linear", min: 0 }, datasets },
    table: cacheTable(runs),
  };
}

/** CDFs of one latency series from the HDR histograms, one chart per pct (chosen in the page). */
function cdfSection(runs: readonly ReportRun[], series: HdrSeries, name: string): ReportSection {
  const pcts = allPcts(runs);
  const byPct: Record<string, DatasetData[]> = {};
  for (const pct of pcts) {
    byPct[String(pct)] = runs.flatMap((r, i) => {
      const line = lineAt(r, pct);
      return line === undefined ? [] : [{ label: r.label, series: i, style: "line" as const, data: hdrCdf(line.hdr, series) }];
    });
  }
  // The highest pct every run measured: where the cache matters most.
  const common = pcts.filter((p) => runs.every((r) => lineAt(r, p) !== undefined));
  const selected = common.at(-1) ?? pcts.at(-1) ?? 0;
  const id = `${series}-cdf`;
  return {
    id,
    title: `${name} distribution (CDF)`,
    note: `Share of requests (TTFT) or of token gaps (ITL) at or below a latency, from each line's HDR histogram; choose the shared-prefix % above the chart.`,
    chart: { id, x: { title: `${name} (ms)`, type: "linear", min: 0 }, y: { title: "fraction at or below", type: "linear", min: 0, max: 1 }, datasets: byPct[String(selected)] ?? [], byPct: { pcts, selected, datasets: byPct } },
    table: distributionTable(runs, series, `${name} percentiles from the HDR histograms (ms)`),
  };
}

/** Each pct's mean (uncached tokens, TTFT) and each run's fitted line over them. */
function modelSection(runs: readonly ReportRun[]): ReportSection {
  const datasets: DatasetData[] = [];
  runs.forEach((r, i) => {
    const pts = points(r.pcts, (l) => l.ttft_fit?.mean_uncached_tokens, (l) => l.ttft_fit?.mean_ttft_ms);
    datasets.push({ label: r.label, series: i, style: "points", data: pts });
    const m = r.ttftModel;
    const xs = pts.map((p) => p.x);
    const line = m === null || xs.length === 0 ? [] : [Math.min(0, ...xs), Math.max(...xs)].map((x) => ({ x, y: m.fixed_ms + (m.prefill_us_per_token / 1000) * x }));
    datasets.push({ label: `${r.label} (fit)`, series: i, style: "fit", data: line });
  });
  return {
    id: "ttft-model",
    title: "TTFT against uncached prompt tokens, with the fitted model",
    note: "Points: each pct's mean TTFT at its mean uncached tokens. Lines: TTFT = fixed + prefill cost x uncached tokens, fitted over every request of the run.",
    chart: { id: "ttft-model", x: { title: "uncached prompt tokens", type: "linear", min: 0 }, y: { title: "TTFT (ms)", type: "linear", min: 0 }, datasets },
    table: modelTable(runs),
  };
}

/** Every section, in page order. */
export function buildSections(runs: readonly ReportRun[]): ReportSection[] {
  return [
    pctSection(runs, "ttft-mean", "Mean TTFT", "Time to first token, mean over the pct's requests.", "mean TTFT (ms)", (l) => l.mean_ttft_ms),
    pctSection(runs, "ttft-median", "Median TTFT", "Time to first token, median.", "median TTFT (ms)", (l) => l.median_ttft_ms),
    pctSection(runs, "ttft-p99", "P99 TTFT", "Time to first token, 99th percentile.", "P99 TTFT (ms)", (l) => l.p99_ttft_ms),
    pctSection(runs, "output-throughput", "Output throughput", "Generated tokens per second over the pct's wall-clock duration.", "output tokens/s", (l) => l.output_throughput),
    pctSection(runs, "itl-p99", "P99 inter-token latency", "99th percentile of the gaps between tokens.", "P99 ITL (ms)", (l) => l.p99_itl_ms),
    modelSection(runs),
    cacheSection(runs),
    cdfSection(runs, "ttft", "TTFT"),
    cdfSection(runs, "itl", "ITL"),
  ];
}
