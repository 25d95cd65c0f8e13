/**
 * Each line over time (its `timeline` and `steady_state`): output throughput and requests in flight, then TTFT and
 * ITL, against seconds from the line's first send, with the steady-state window shaded. One line is drawn at a time,
 * chosen above the chart (every line of every run that carries a timeline); the tables give every line's window
 * beside its whole-line figures, and the drawn line's buckets.
 */
import { labelOf } from "../schema/axes.ts";
import { unpackTimeline, type TimelineData } from "../metrics/timeline.ts";
import type { SteadyState, Timeline } from "../schema/timeline-shape.ts";
import type { DatasetData, ReportSection, SeriesRun } from "./chart-data.ts";
import { groupsOf, keyValue, type AnyLine } from "./curves.ts";
import { formatCell } from "./text-table.ts";

interface TimedLine {
  label: string;
  line: AnyLine;
  timeline: TimelineData;
  window: SteadyState | null;
}

function timedLines(runs: readonly SeriesRun[]): TimedLine[] {
  const groups = groupsOf(runs);
  return groups.flatMap((g) =>
    g.lines.flatMap((line) => {
      const timeline = (line as { timeline?: Timeline | null }).timeline;
      if (!timeline || timeline.buckets === 0) return [];
      const place = labelOf(line);
      return [
        {
          label: groups.length > 1 ? `${g.label} · ${place}` : place,
          line,
          timeline: unpackTimeline(timeline),
          window: (line as { steady_state?: SteadyState | null }).steady_state ?? null,
        },
      ];
    }),
  );
}

/** Seconds at each bucket's middle. */
const midS = (t: TimelineData, k: number): number => (k + 0.5) * t.bucket_s;

function series(t: TimelineData, values: readonly (number | null)[], scale = 1): { x: number; y: number }[] {
  const out: { x: number; y: number }[] = [];
  values.forEach((v, k) => {
    if (v !== null) out.push({ x: midS(t, k), y: v * scale });
  });
  return out;
}

/** The window as a shaded band over the chart's height. */
function band(w: SteadyState | null, curves: readonly DatasetData[]): DatasetData[] {
  if (w === null) return [];
  const top = Math.max(1, ...curves.filter((d) => d.axis === undefined).flatMap((d) => d.data.map((p) => p.y)));
  return [
    {
      label: `steady state (>= ${Math.round(w.rule * 100)} % of peak in flight)`,
      series: -1,
      style: "window",
      data: [
        { x: w.start_s, y: top },
        { x: w.end_s, y: top },
      ],
    },
  ];
}

function throughputSets(l: TimedLine): DatasetData[] {
  const t = l.timeline;
  const curves: DatasetData[] = [
    { label: "output tokens/s", series: 0, style: "line", data: series(t, t.output_tokens, 1 / t.bucket_s) },
    { label: "requests in flight", series: 1, style: "dashed", axis: "y2", data: series(t, t.in_flight) },
  ];
  return [...curves, ...band(l.window, curves)];
}

function latencySets(l: TimedLine): DatasetData[] {
  const t = l.timeline;
  const curves: DatasetData[] = [
    { label: "mean TTFT (ms)", series: 0, style: "line", data: series(t, t.ttft_ms) },
    { label: "mean ITL (ms)", series: 2, style: "dashed", data: series(t, t.itl_ms) },
  ];
  return [...curves, ...band(l.window, curves)];
}

const byLine = (lines: readonly TimedLine[], sets: (l: TimedLine) => DatasetData[]) => ({
  labels: lines.map((l) => l.label),
  selected: 0,
  datasets: lines.map(sets),
});

const X = { title: "seconds from the line's first send", type: "linear" as const, min: 0 };

/** The two timeline sections; none when no line carries a timeline. */
export function timelineSections(runs: readonly SeriesRun[]): ReportSection[] {
  const lines = timedLines(runs);
  if (lines.length === 0) return [];
  const first = lines[0]!;
  const w = (l: TimedLine, key: keyof SteadyState) => formatCell(l.window === null ? null : (l.window[key] as number | null));
  const windows = {
    id: "timeline",
    title: "Steady-state window of every line",
    columns: [
      "line",
      "start_s",
      "end_s",
      "requests",
      "completed",
      "mean_ttft_ms",
      "steady mean_ttft_ms",
      "p99_ttft_ms",
      "steady p99_ttft_ms",
      "output_throughput",
      "steady output_throughput",
    ],
    rows: lines.map((l) => [
      l.label,
      w(l, "start_s"),
      w(l, "end_s"),
      w(l, "requests"),
      formatCell(keyValue(l.line, "completed")),
      formatCell(keyValue(l.line, "mean_ttft_ms")),
      w(l, "mean_ttft_ms"),
      formatCell(keyValue(l.line, "p99_ttft_ms")),
      w(l, "p99_ttft_ms"),
      formatCell(keyValue(l.line, "output_throughput")),
      w(l, "output_throughput"),
    ]),
  };
  const t = first.timeline;
  const buckets = {
    id: "timeline-latency",
    title: `Buckets of ${first.label}`,
    columns: ["t_s", "started", "finished", "in_flight", "output_tokens", "ttft_ms", "itl_ms", "cached_pct"],
    rows: t.started.map((_, k) => [
      formatCell(midS(t, k), 3),
      String(t.started[k]),
      String(t.finished[k]),
      formatCell(t.in_flight[k]),
      String(t.output_tokens[k]),
      formatCell(t.ttft_ms[k]),
      formatCell(t.itl_ms[k]),
      formatCell(t.cached_pct[k]),
    ]),
  };
  return [
    {
      id: "timeline",
      title: "A line over time: throughput and requests in flight",
      note: "Output tokens per second and requests in flight in each bucket of the chosen line; the shaded band is its steady-state window, whose figures the table sets beside the whole line's.",
      chart: {
        id: "timeline",
        x: X,
        y: { title: "output tokens/s", type: "linear", min: 0 },
        y2: { title: "requests in flight", type: "linear", min: 0 },
        datasets: throughputSets(first),
        byLine: byLine(lines, throughputSets),
        legend: true,
      },
      table: windows,
    },
    {
      id: "timeline-latency",
      title: "A line over time: TTFT and ITL",
      note: "Mean TTFT of the requests whose first token came in each bucket, and the mean gap between tokens, for the chosen line; the steady-state window shaded. The table holds the first line's buckets.",
      chart: {
        id: "timeline-latency",
        x: X,
        y: { title: "ms", type: "linear", min: 0 },
        datasets: latencySets(first),
        byLine: byLine(lines, latencySets),
        legend: true,
      },
      table: buckets,
    },
  ];
}
