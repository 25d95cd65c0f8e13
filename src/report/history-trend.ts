/**
 * `report --history`: each key metric of each line across the runs of a history, oldest first (x = the run's place,
 * labelled by its start and tag), one series per line (its pct, or its axes' label). Pure: the command line reads
 * the database and hands the runs here as their lines, with the reader of a metric that `history show` uses, so
 * the chart and the trend table draw the same numbers.
 */
import { labelOf } from "../schema/axes.ts";
import type { DatasetData, ReportSection } from "./chart-data.ts";
import { formatCell } from "./text-table.ts";

/** One run of the trend: a stored run, or a file's run drawn as the newest point (not stored). */
export interface TrendRun {
  runId: string;
  /** The x axis's label: the run's start date and its tag (or its file). */
  label: string;
  lines: readonly object[];
}

export interface HistoryTrend {
  runs: readonly TrendRun[];
  /** The metrics drawn, one chart each. */
  metrics: readonly string[];
  /** A metric's value of one line; null when the line lacks it. */
  read: (line: object, metric: string) => number | null;
}

/** "2026-12-01 10:12 v1.2": the run's start to the minute, then its tag (or what else names it). */
export function trendLabel(startedAt: string, name: string | null): string {
  const when = startedAt.slice(0, 16).replace("T", " ");
  return name === null || name === "" ? when : `${when} ${name}`;
}

/** Each run's mean of `metric` per line label (a line's repeats averaged, as `history show` does). */
function valuesByLine(trend: HistoryTrend, metric: string): { labels: string[]; perRun: Array<Map<string, number>> } {
  const labels: string[] = [];
  const perRun = trend.runs.map((run) => {
    const sums = new Map<string, { sum: number; n: number }>();
    for (const line of run.lines) {
      const v = trend.read(line, metric);
      if (v === null) continue;
      const label = labelOf(line);
      if (!labels.includes(label)) labels.push(label);
      const s = sums.get(label) ?? { sum: 0, n: 0 };
      sums.set(label, { sum: s.sum + v, n: s.n + 1 });
    }
    return new Map([...sums].map(([label, s]) => [label, s.sum / s.n]));
  });
  return { labels, perRun };
}

function trendSection(trend: HistoryTrend, metric: string): ReportSection {
  const { labels, perRun } = valuesByLine(trend, metric);
  const datasets: DatasetData[] = labels.map((label, series) => ({
    label,
    series,
    style: "line",
    data: perRun.flatMap((values, x) => (values.has(label) ? [{ x, y: values.get(label)! }] : [])),
  }));
  const id = `history-${metric}`;
  return {
    id,
    title: `History: ${metric}`,
    note: `${metric} of each line across the runs, oldest first (a line's repeats averaged); the x axis names each run by its start and tag.`,
    chart: {
      id,
      x: { title: "run (oldest first)", type: "linear", min: -0.5, max: trend.runs.length - 0.5, labels: trend.runs.map((r) => r.label) },
      y: { title: metric, type: "linear", min: 0 },
      datasets,
      legend: true,
    },
    table: {
      id,
      title: `${metric} per line, oldest run first`,
      columns: ["run", "run_id", ...labels],
      rows: trend.runs.map((r, i) => [r.label, r.runId, ...labels.map((l) => formatCell(perRun[i]!.get(l) ?? null))]),
    },
  };
}

/** One section per metric, in the order given; none without runs. */
export const historySections = (trend: HistoryTrend | null): ReportSection[] =>
  trend === null || trend.runs.length === 0 ? [] : trend.metrics.map((m) => trendSection(trend, m));
