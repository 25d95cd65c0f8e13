/** The plain data of a report section: a chart as the page script draws it, and the table of its numbers. */
import type { ReportRun } from "./runs.ts";
import type { ReportTable } from "./tables.ts";

/** A run with its colour: its index among all the report's runs, whatever its kind. */
export type SeriesRun = ReportRun & { series: number };

export interface Point {
  x: number;
  y: number;
}

/** One drawn series: `series` is the run's index (its colour), -1 for a reference line. */
export interface DatasetData {
  label: string;
  series: number;
  style: "line" | "points" | "fit" | "reference" | "bar";
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
}

/** A chart as the page script draws it. CDF charts hold one set of datasets per pct, switched by a selector. */
export interface ChartData {
  id: string;
  x: AxisData;
  y: AxisData;
  datasets: DatasetData[];
  byPct?: { pcts: number[]; selected: number; datasets: Record<string, DatasetData[]> };
  /** Bars stacked per run (and x), e.g. cached tokens per tier. */
  stacked?: boolean;
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

