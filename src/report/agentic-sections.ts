/**
 * The HTML report's pictures of agentic replays, from each run's request details: a swim lane per run (drawn by the
 * page script itself: thousands of bars, one row per session), and three charts over every such run: the sessions'
 * job completion times as a CDF, each session's hit ratio against its ceiling (an infinite cache's), and TTFT against
 * prompt length (every request, with the line's binned medians). Pure: the details are read by the caller.
 */
import type { AgenticRequest } from "./agentic-details.ts";
import { swimLanes } from "./agentic-lanes.ts";
import { sessionFigures, type SessionFigures } from "./agentic-sessions.ts";
import type { DatasetData, Point, ReportSection } from "./chart-data.ts";
import { formatCell } from "./text-table.ts";

export interface AgenticRun {
  label: string;
  /** Its colour: its index among the report's runs. */
  series: number;
  requests: readonly AgenticRequest[];
  /** The line's ttft_by_context_tokens, when it has one. */
  bins: readonly { from_tokens: number; to_tokens: number | null; requests: number; median_ttft_ms: number | null }[];
}

/** A swim lane as the page script draws it: rows [label, sub-rows]; bars [row, sub-row, from s, to s, hit ratio | null, chain, turn]. */
export interface LaneChart {
  id: string;
  title: string;
  spanS: number;
  rows: [string, number][];
  bars: [number, number, number, number, number | null, string, number][];
}

const r3 = (v: number): number => Math.round(v * 1000) / 1000;

function laneChart(run: AgenticRun, index: number): LaneChart {
  const lanes = swimLanes(run.requests);
  return {
    id: `agentic-lanes-${index}`,
    title: `Sessions over time: ${run.label}`,
    spanS: lanes.spanS,
    rows: lanes.rows.map((r) => [`#${r.session} ${r.traceId}`, r.slots]),
    bars: lanes.bars.map((b) => [b.row, b.slot, r3(b.fromS), r3(b.toS), b.hitRatio === null ? null : r3(b.hitRatio), b.agentPath, b.turn]),
  };
}

/** The fraction of values at or below each one: a step per session. */
function cdf(values: readonly number[]): Point[] {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.map((x, i) => ({ x, y: (i + 1) / sorted.length }));
}

const cell = (v: number | null): string => formatCell(v, 3);

function jctSection(runs: readonly AgenticRun[], figures: readonly SessionFigures[][]): ReportSection {
  return {
    id: "agentic-jct",
    title: "Agentic sessions: job completion time (CDF)",
    note: "Each session's makespan, its first send to its last byte: the fraction of sessions done within x seconds.",
    chart: {
      id: "agentic-jct",
      x: { title: "job completion time (s)", type: "linear", min: 0 },
      y: { title: "fraction of sessions", type: "linear", min: 0, max: 1 },
      datasets: runs.map((r, i) => ({ label: r.label, series: r.series, style: "line", data: cdf(figures[i]!.map((f) => f.jctMs / 1000)) })),
      legend: false,
    },
    table: {
      id: "agentic-jct",
      title: "Job completion time per session",
      columns: ["run", "session", "trace", "requests", "chains", "jct_s"],
      rows: runs.flatMap((r, i) => figures[i]!.map((f) => [r.label, String(f.session), f.traceId, String(f.requests), String(f.chains), cell(f.jctMs / 1000)])),
    },
  };
}

function hitSection(runs: readonly AgenticRun[], figures: readonly SessionFigures[][]): ReportSection {
  const datasets: DatasetData[] = runs.map((r, i) => ({
    label: r.label,
    series: r.series,
    style: "points",
    data: figures[i]!.flatMap((f) => (f.hitRatio === null || f.ceilingHitRatio === null ? [] : [{ x: f.ceilingHitRatio, y: f.hitRatio }])),
  }));
  datasets.push({
    label: "at the ceiling",
    series: -1,
    style: "reference",
    data: [
      { x: 0, y: 0 },
      { x: 1, y: 1 },
    ],
  });
  return {
    id: "agentic-hit",
    title: "Agentic sessions: hit ratio against the ceiling",
    note: "One point per session: its cache hit ratio against an infinite cache's; below the diagonal, the cache lost what the session reused.",
    chart: {
      id: "agentic-hit",
      x: { title: "ceiling hit ratio (infinite cache)", type: "linear", min: 0, max: 1 },
      y: { title: "session hit ratio", type: "linear", min: 0, max: 1 },
      datasets,
    },
    table: {
      id: "agentic-hit",
      title: "Hit ratio per session",
      columns: ["run", "session", "trace", "hit_ratio", "ceiling_hit_ratio"],
      rows: runs.flatMap((r, i) => figures[i]!.map((f) => [r.label, String(f.session), f.traceId, cell(f.hitRatio), cell(f.ceilingHitRatio)])),
    },
  };
}

function ttftSection(runs: readonly AgenticRun[]): ReportSection {
  const datasets: DatasetData[] = runs.flatMap((r) => {
    const pts = r.requests
      .filter((q) => q.ok && q.ttftMs !== null && q.promptLen > 0)
      .map((q) => ({ x: q.promptLen, y: q.ttftMs! }))
      .sort((a, b) => a.x - b.x);
    // A bin's median at its geometric middle (the last bin, open, at twice its start).
    const medians = r.bins.flatMap((b) =>
      b.median_ttft_ms === null || b.from_tokens <= 0 ? [] : [{ x: Math.sqrt(b.from_tokens * (b.to_tokens ?? 2 * b.from_tokens)), y: b.median_ttft_ms }],
    );
    return [
      { label: r.label, series: r.series, style: "points" as const, data: pts },
      ...(medians.length > 0 ? [{ label: `${r.label}: median by context bin`, series: r.series, style: "dashed" as const, data: medians }] : []),
    ];
  });
  return {
    id: "agentic-ttft",
    title: "Agentic requests: TTFT against context length",
    note: "Every request's time to first token against its prompt length (log axis), with the line's median per doubling bin.",
    chart: { id: "agentic-ttft", x: { title: "prompt tokens", type: "logarithmic" }, y: { title: "TTFT (ms)", type: "linear", min: 0 }, datasets },
    table: {
      id: "agentic-ttft",
      title: "Median TTFT by context bin",
      columns: ["run", "from_tokens", "to_tokens", "requests", "median_ttft_ms"],
      rows: runs.flatMap((r) =>
        r.bins.map((b) => [r.label, String(b.from_tokens), b.to_tokens === null ? "-" : String(b.to_tokens), String(b.requests), cell(b.median_ttft_ms)]),
      ),
    },
  };
}

/** The swim lanes (one per run) and the three charts over every run; nothing without a run. */
export function agenticPictures(runs: readonly AgenticRun[]): { lanes: LaneChart[]; sections: ReportSection[] } {
  if (runs.length === 0) return { lanes: [], sections: [] };
  const figures = runs.map((r) => sessionFigures(r.requests));
  return { lanes: runs.map(laneChart), sections: [jctSection(runs, figures), hitSection(runs, figures), ttftSection(runs)] };
}
