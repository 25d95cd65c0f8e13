/** The plain data of a report section: a chart as the page script draws it, and the table of its numbers. */
import type { ReportRun } from "./runs.ts";
import type { ReportTable } from "./tables.ts";

/** A run with its colour: its index among all the report's runs, whatever its kind. */
export type SeriesRun = ReportRun & { series: number };

export interface Point {
  x: number;
  y: number;
}

/**
 * One drawn series: `series` is its colour (the run's index, or the curve's in a chart of curves), -1 for a reference
 * line. "dashed" is a second metric of a curve (P99 beside the median); "marker" marks points (evicting lines).
 */
export interface DatasetData {
  label: string;
  series: number;
  style: "line" | "dashed" | "points" | "fit" | "reference" | "marker" | "bar" | "window";
  /** Drawn against the chart's second y axis (y2). */
  axis?: "y2";
  data: Point[];
  /** Bars: the stack it belongs to (one per run), and its shade of the run's colour (0 = full). */
  stack?: string;
  shade?: number;
}

export interface AxisData {
  title: string;
  type: "linear" | "logarithmic";
  min?: number;
  max?: number;
  /** A tick at each integer x from 0, named by its label (a history trend: x is the run's place). */
  labels?: string[];
}

/** A chart as the page script draws it. CDF charts hold one set of datasets per pct, switched by a selector. */
export interface ChartData {
  id: string;
  x: AxisData;
  y: AxisData;
  datasets: DatasetData[];
  byPct?: { pcts: number[]; selected: number; datasets: Record<string, DatasetData[]> };
  /** A second y axis, on the right (a timeline's requests in flight beside its throughput). */
  y2?: AxisData;
  /** One set of datasets per line, chosen by a selector (a timeline: one line at a time). */
  byLine?: { labels: string[]; selected: number; datasets: DatasetData[][] };
  /** Bars stacked per run (and x), e.g. cached tokens per tier. */
  stacked?: boolean;
  /** Whether the chart shows its own legend: not when its series are the runs the page's legend already names. */
  legend?: boolean;
}

export interface ReportSection {
  id: string;
  title: string;
  /** One sentence on how to read it. */
  note: string;
  chart: ChartData;
  table: ReportTable;
}

/** Points of the lines where both coordinates are finite numbers. */
export function points<L>(lines: readonly L[], x: (l: L) => number | null | undefined, y: (l: L) => number | null | undefined): Point[] {
  const out: Point[] = [];
  for (const l of lines) {
    const xv = x(l);
    const yv = y(l);
    if (typeof xv === "number" && typeof yv === "number" && Number.isFinite(xv) && Number.isFinite(yv)) out.push({ x: xv, y: yv });
  }
  return out.sort((a, b) => a.x - b.x);
}
