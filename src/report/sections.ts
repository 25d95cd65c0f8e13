/**
 * The sections of a multi-run report, each a chart (as plain data, drawn in the HTML page) and the table of its
 * numbers. The Markdown report is the same sections without the charts.
 */
import { fidelitySections } from "./fidelity-section.ts";
import { ledgerSections } from "./ledger-section.ts";
import { hdrCdf, type HdrSeries } from "./hdr-stats.ts";
import type { ReportRun } from "./runs.ts";
import { allPcts, cacheTable, distributionTable, lineAt, modelTable, pctTable } from "./tables.ts";
import type { StoredSweepLine } from "../metrics/sweep-line.ts";
import { points, type AxisData, type ChartData, type DatasetData, type ReportSection, type SeriesRun } from "./chart-data.ts";
import { roundSections } from "./round-sections.ts";
import { loopSections, rateSections, workingSetSections } from "./axis-sections.ts";
import { windowSections } from "./window-sections.ts";
import { groupsOf } from "./curves.ts";
import { timelineSections } from "./timeline-sections.ts";
import { telemetrySections } from "./telemetry-sections.ts";
import { capacitySections } from "./capacity-sections.ts";

const PCT_AXIS: AxisData = { title: "shared prefix (%)", type: "linear", min: 0, max: 100 };

/** A metric against pct, one line per run. */
function pctChart(runs: readonly SeriesRun[], id: string, yTitle: string, value: (l: StoredSweepLine) => number | null | undefined): ChartData {
  return {
    id,
    x: PCT_AXIS,
    y: { title: yTitle, type: "linear", min: 0 },
    datasets: runs.map((r) => ({ label: r.label, series: r.series, style: "line", data: points(r.pcts, (l) => l.shared_prefix_pct, value) })),
  };
}

function pctSection(
  runs: readonly SeriesRun[],
  id: string,
  title: string,
  note: string,
  yTitle: string,
  value: (l: StoredSweepLine) => number | null | undefined,
): ReportSection {
  return { id, title, note, chart: pctChart(runs, id, yTitle, value), table: pctTable(runs, id, title, value) };
}

/** Expected (x) against observed (y) mean cached tokens; points on the diagonal are right. */
function cacheSection(runs: readonly SeriesRun[]): ReportSection {
  const datasets: DatasetData[] = runs.map((r) => ({
    label: r.label,
    series: r.series,
    style: "points",
    data: points(
      r.pcts,
      (l) => l.expected_cached_tokens,
      (l) => l.mean_cached_tokens,
    ),
  }));
  const top = Math.max(1, ...datasets.flatMap((d) => d.data.flatMap((p) => [p.x, p.y])));
  datasets.push({
    label: "observed = expected",
    series: -1,
    style: "reference",
    data: [
      { x: 0, y: 0 },
      { x: top, y: top },
    ],
  });
  return {
    id: "cached-tokens",
    title: "Expected vs observed cached tokens",
    note: "Mean cached tokens the server reported per request against the page-aligned prefix it should hold; every point belongs on the diagonal.",
    chart: {
      id: "cached-tokens",
      x: { title: "expected cached tokens", type: "linear", min: 0 },
      y: { title: "observed mean cached tokens", type: "linear", min: 0 },
      datasets,
    },
    table: cacheTable(runs),
  };
}

/** CDFs of one latency series from the HDR histograms, one chart per pct (chosen in the page). */
function cdfSection(runs: readonly SeriesRun[], series: HdrSeries, name: string): ReportSection {
  const pcts = allPcts(runs);
  const byPct: Record<string, DatasetData[]> = {};
  for (const pct of pcts) {
    byPct[String(pct)] = runs.flatMap((r) => {
      const line = lineAt(r, pct);
      return line === undefined ? [] : [{ label: r.label, series: r.series, style: "line" as const, data: hdrCdf(line.hdr, series) }];
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
    chart: {
      id,
      x: { title: `${name} (ms)`, type: "linear", min: 0 },
      y: { title: "fraction at or below", type: "linear", min: 0, max: 1 },
      datasets: byPct[String(selected)] ?? [],
      byPct: { pcts, selected, datasets: byPct },
    },
    table: distributionTable(runs, series, `${name} percentiles from the HDR histograms (ms)`),
  };
}

/** Each pct's mean (uncached tokens, TTFT) and each run's fitted line over them. */
function modelSection(runs: readonly SeriesRun[]): ReportSection {
  const datasets: DatasetData[] = [];
  runs.forEach((r) => {
    const i = r.series;
    const pts = points(
      r.pcts,
      (l) => l.ttft_fit?.mean_uncached_tokens,
      (l) => l.ttft_fit?.mean_ttft_ms,
    );
    datasets.push({ label: r.label, series: i, style: "points", data: pts });
    const m = r.ttftModel;
    const xs = pts.map((p) => p.x);
    const line =
      m === null || xs.length === 0 ? [] : [Math.min(0, ...xs), Math.max(...xs)].map((x) => ({ x, y: m.fixed_ms + (m.prefill_us_per_token / 1000) * x }));
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

/**
 * Every section, in page order: the charts of what the runs vary (the loop's setting, the request rate, the working
 * set), then the sweeps' (x = shared prefix %), then the multi-turn runs' (x = round). A chart that does not apply
 * is not drawn; a chart whose series are the runs themselves leaves naming them to the page's legend.
 */
export function buildSections(all: readonly ReportRun[]): ReportSection[] {
  const everyRun = all.map((r, series) => ({ ...r, series }));
  // A capacity search's probes are drawn by its own sections (capacity-sections.ts), not as a sweep.
  const runs = everyRun.filter((r) => r.capacity === undefined);
  const sweeps = runs.filter((r) => r.kind === "sweep");
  const multiturn = runs.filter((r) => r.kind === "round");
  const groups = groupsOf(runs);
  const axes = [...loopSections(groups), ...rateSections(groups), ...workingSetSections(groups), ...windowSections(groups)];
  // With a rate or working-set axis of their own, one-pct runs would draw a dot per series against pct.
  const pctCurves = axes.length === 0 || sweeps.some((r) => new Set(r.pcts.map((l) => l.shared_prefix_pct)).size > 1);
  const sections = [
    ...axes,
    ...(sweeps.length > 0 ? sweepSections(sweeps, pctCurves) : []),
    ...(multiturn.length > 0 ? roundSections(multiturn) : []),
    ...timelineSections(runs),
    ...telemetrySections(runs),
    ...ledgerSections(runs),
    ...fidelitySections(runs),
    ...capacitySections(everyRun),
  ];
  return sections.map((s) => ({ ...s, chart: { ...s.chart, legend: s.chart.legend ?? !namesOnlyRuns(s.chart, everyRun) } }));
}

/** Every series of the chart is a run under its own label and colour (or a fit or reference line drawn with one). */
const namesOnlyRuns = (chart: ChartData, runs: readonly SeriesRun[]): boolean =>
  [...chart.datasets, ...Object.values(chart.byPct?.datasets ?? {}).flat(), ...(chart.byLine?.datasets.flat() ?? [])].every(
    (d) => d.style === "fit" || d.style === "reference" || runs.some((r) => r.series === d.series && r.label === d.label),
  );

function sweepSections(runs: readonly SeriesRun[], pctCurves: boolean): ReportSection[] {
  return [...(pctCurves ? pctSections(runs) : []), modelSection(runs), cacheSection(runs), cdfSection(runs, "ttft", "TTFT"), cdfSection(runs, "itl", "ITL")];
}

function pctSections(runs: readonly SeriesRun[]): ReportSection[] {
  return [
    pctSection(runs, "ttft-mean", "Mean TTFT", "Time to first token, mean over the pct's requests.", "mean TTFT (ms)", (l) => l.mean_ttft_ms),
    pctSection(runs, "ttft-median", "Median TTFT", "Time to first token, median.", "median TTFT (ms)", (l) => l.median_ttft_ms),
    pctSection(runs, "ttft-p99", "P99 TTFT", "Time to first token, 99th percentile.", "P99 TTFT (ms)", (l) => l.p99_ttft_ms),
    pctSection(
      runs,
      "output-throughput",
      "Output throughput",
      "Generated tokens per second over the pct's wall-clock duration.",
      "output tokens/s",
      (l) => l.output_throughput,
    ),
    pctSection(runs, "itl-p99", "P99 inter-token latency", "99th percentile of the gaps between tokens.", "P99 ITL (ms)", (l) => l.p99_itl_ms),
  ];
}
