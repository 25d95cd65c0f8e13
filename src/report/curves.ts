/**
 * Charts whose x axis is something the runs vary other than the shared-prefix %: the request rate, the working set,
 * a setting of the run headers. Every line of every run is a point, whichever command wrote it; the lines that differ
 * only in the chart's x make one curve (a run's 90 % lines at each rate), named by their other axes (schema/axes.ts),
 * and every curve's numbers are its table's rows.
 */
import type { StoredSweepLine } from "../metrics/sweep-line.ts";
import type { RunInfo } from "../schema/nested.ts";
import { axesLabel, axesOf, isRoundAxes, type Axis, type LineAxes } from "../schema/axes.ts";
import type { KeyName } from "../schema/key-table.ts";
import { points, type AxisData, type DatasetData, type ReportSection, type SeriesRun } from "./chart-data.ts";
import type { RoundLine } from "./rounds.ts";
import { formatCell } from "./text-table.ts";

export type AnyLine = StoredSweepLine | RoundLine;

/** A run as measured: the series splitByCell cut it into, together again. */
export interface RunGroup {
  index: number;
  label: string;
  header: RunInfo | undefined;
  lines: AnyLine[];
}

export function groupsOf(runs: readonly SeriesRun[]): RunGroup[] {
  const groups = new Map<number, RunGroup>();
  for (const r of runs) {
    const index = r.group?.index ?? -1 - r.series;
    const g = groups.get(index) ?? { index, label: r.group?.label ?? r.label, header: r.header, lines: [] };
    g.lines.push(...r.pcts, ...r.rounds);
    groups.set(index, g);
  }
  return [...groups.values()];
}

/** A line's number under a key of the key table; null where it has none. */
export function keyValue(line: AnyLine, key: KeyName): number | null {
  const v = (line as Record<string, unknown>)[key];
  return typeof v === "number" ? v : null;
}

/** Whether an axis takes two or more values among one run's lines. */
export const varies = (groups: readonly RunGroup[], value: (a: LineAxes) => number | undefined): boolean =>
  groups.some((g) => new Set(g.lines.map((l) => value(axesOf(l))).filter((v) => v !== undefined && Number.isFinite(v))).size > 1);

interface Metric {
  key: KeyName;
  /** Its name in a dataset's label when the chart draws several. */
  name: string;
  dashed?: boolean;
}

export interface CurveSpec {
  id: string;
  title: string;
  note: string;
  x: AxisData;
  xValue: (l: AnyLine, g: RunGroup) => number | null | undefined;
  y: AxisData;
  metrics: Metric[];
  /** The axis the chart's x replaces: lines that differ only in it make one curve. */
  over?: Extract<Axis, "request_rate" | "working_set" | "window">;
  /** Curves across runs (a loop over a setting: one curve per pct through every run) rather than within each. */
  across?: boolean;
  include?: (l: AnyLine) => boolean;
  /** Datasets drawn over the curves: capacity lines, marked points, a diagonal. */
  extras?: (lines: readonly { line: AnyLine; group: RunGroup }[], curves: readonly DatasetData[]) => DatasetData[];
  /** More table columns, after the metrics. */
  columns?: Array<[string, (l: AnyLine) => string]>;
}

/** A line's place without the chart's own axis: "90%", "90% ws=4", "round 2". */
function placeLabel(a: LineAxes, over: CurveSpec["over"]): string {
  if (isRoundAxes(a) || over === undefined) return axesLabel(a);
  // A window's pct and rate are the trace's own in that window: they follow the window, one curve per run.
  if (over === "window") return "by window";
  return axesLabel(over === "request_rate" ? { ...a, request_rate: Infinity } : { ...a, working_set: 1 });
}

interface Curve {
  label: string;
  group: RunGroup;
  lines: AnyLine[];
}

function curvesOf(groups: readonly RunGroup[], spec: CurveSpec): Curve[] {
  const curves = new Map<string, Curve>();
  for (const group of groups) {
    for (const line of group.lines) {
      if (spec.include && !spec.include(line)) continue;
      const place = placeLabel(axesOf(line), spec.over);
      const key = spec.across ? place : `${group.index}\u0000${place}`;
      const curve = curves.get(key) ?? { label: place, group, lines: [] };
      curve.lines.push(line);
      curves.set(key, curve);
    }
  }
  const all = [...curves.values()];
  // Curves of several runs are named by their run too.
  const named = !spec.across && new Set(all.map((c) => c.group.index)).size > 1;
  return named ? all.map((c) => ({ ...c, label: `${c.group.label} · ${c.label}` })) : all;
}

/** The chart and its table, one curve per place (per run, unless `across`); null when no curve has two points. */
export function curveSection(groups: readonly RunGroup[], spec: CurveSpec): ReportSection | null {
  const curves = curvesOf(groups, spec);
  const groupOf = new Map(groups.flatMap((g) => g.lines.map((l) => [l, g] as const)));
  const x = (l: AnyLine) => spec.xValue(l, groupOf.get(l)!);
  const many = spec.metrics.length > 1;
  const datasets: DatasetData[] = curves.flatMap((c, series) =>
    spec.metrics.map((m) => ({
      label: many ? `${c.label} ${m.name}` : c.label,
      series,
      style: m.dashed ? ("dashed" as const) : ("line" as const),
      data: points(c.lines, x, (l) => keyValue(l, m.key)),
    })),
  );
  if (!datasets.some((d) => new Set(d.data.map((p) => p.x)).size > 1)) return null;
  const all = curves.flatMap((c) => c.lines.map((line) => ({ line, group: c.group })));
  const rows = curves.flatMap((c) =>
    [...c.lines]
      .filter((l) => Number.isFinite(x(l) ?? NaN))
      .sort((a, b) => x(a)! - x(b)!)
      .map((l) => [c.label, formatCell(x(l)), ...spec.metrics.map((m) => formatCell(keyValue(l, m.key))), ...(spec.columns ?? []).map(([, cell]) => cell(l))]),
  );
  const columns = ["series", spec.x.title, ...spec.metrics.map((m) => m.key), ...(spec.columns ?? []).map(([name]) => name)];
  return {
    id: spec.id,
    title: spec.title,
    note: spec.note,
    chart: { id: spec.id, x: spec.x, y: spec.y, datasets: [...datasets, ...(spec.extras?.(all, datasets) ?? [])], legend: true },
    table: { id: spec.id, title: spec.title, columns, rows },
  };
}

/** A vertical line at x across the y range the curves span. */
export function verticalLine(label: string, x: number, curves: readonly DatasetData[], yMax?: number): DatasetData {
  const top = yMax ?? Math.max(1, ...curves.flatMap((d) => d.data.map((p) => p.y)));
  return {
    label,
    series: -1,
    style: "reference",
    data: [
      { x, y: 0 },
      { x, y: top },
    ],
  };
}
