/**
 * The charts of lines with a `window` axis (a trace replay's windows of trace time): hit ratio, expected and
 * observed, and TTFT over trace time, one curve per run; and TTFT against the cached fraction of the prompt, from
 * each run's line without a window (the whole replay) and its ttft_by_cached_fraction buckets.
 */
import { axesOf, isRoundAxes } from "../schema/axes.ts";
import type { AxisData, DatasetData, ReportSection } from "./chart-data.ts";
import { ms, pair, present } from "./axis-sections.ts";
import { curveSection, varies, type AnyLine, type RunGroup } from "./curves.ts";
import { formatCell } from "./text-table.ts";

const windowOf = (l: AnyLine): number | undefined => {
  const a = axesOf(l);
  return isRoundAxes(a) ? undefined : a.window;
};

/** Seconds of trace time per window, from the run's header (options.window_s); null where it has none. */
function windowSeconds(g: RunGroup): number | null {
  const v = (g.header?.options as Record<string, unknown> | undefined)?.window_s;
  return typeof v === "number" && v > 0 ? v : null;
}

export function windowSections(groups: readonly RunGroup[]): ReportSection[] {
  if (!varies(groups, (a) => (isRoundAxes(a) ? undefined : a.window))) return [];
  // Trace seconds at the window's start where every run says how long a window is; else the window's index.
  const seconds = groups.every((g) => !g.lines.some((l) => windowOf(l) !== undefined) || windowSeconds(g) !== null);
  const x: AxisData = { title: seconds ? "trace time (s, window start)" : "window", type: "linear", min: 0 };
  const xValue = (l: AnyLine, g: RunGroup) => {
    const w = windowOf(l);
    return w === undefined ? null : seconds ? w * windowSeconds(g)! : w;
  };
  const base = { x, xValue, over: "window" as const, include: (l: AnyLine) => windowOf(l) !== undefined };
  return [
    curveSection(groups, {
      ...base,
      id: "window-hit-ratio",
      title: "Hit ratio over trace time",
      y: { title: "hit ratio", type: "linear", min: 0, max: 1 },
      metrics: pair(["observed_hit_ratio", "observed"], ["expected_hit_ratio", "expected"]),
      note: "Share of each window's prompt tokens the server reported cached (solid) and that the client predicted (dashed: the lower bounds, eviction included); where solid falls below dashed the cache lost what it should have kept.",
    }),
    curveSection(groups, {
      ...base,
      id: "window-ttft",
      title: "TTFT over trace time",
      y: ms("TTFT"),
      metrics: pair(["median_ttft_ms", "median"], ["p99_ttft_ms", "p99"]),
      note: "Time to first token of each window's requests, median (solid) and P99 (dashed), against the trace time the window starts at.",
    }),
    cachedFractionSection(groups),
  ].filter(present);
}

interface Bucket {
  from: number;
  to: number;
  requests: number;
  median_ttft_ms: number | null;
}

function bucketsOf(l: AnyLine): Bucket[] | null {
  const b = (l as Record<string, unknown>).ttft_by_cached_fraction;
  return Array.isArray(b) ? (b as Bucket[]) : null;
}

/** Median TTFT at each bucket's middle cached fraction, one curve per run (its line for the whole replay). */
function cachedFractionSection(groups: readonly RunGroup[]): ReportSection | null {
  const curves = groups.flatMap((g) => {
    const whole = g.lines.find((l) => windowOf(l) === undefined && !isRoundAxes(axesOf(l)) && bucketsOf(l) !== null);
    return whole === undefined ? [] : [{ group: g, buckets: bucketsOf(whole)! }];
  });
  if (curves.length === 0) return null;
  const datasets: DatasetData[] = curves.map((c, series) => ({
    label: curves.length > 1 ? c.group.label : "median TTFT",
    series,
    style: "line",
    data: c.buckets.filter((b) => b.median_ttft_ms !== null).map((b) => ({ x: (b.from + b.to) / 2, y: b.median_ttft_ms! })),
  }));
  if (!datasets.some((d) => d.data.length > 1)) return null;
  const rows = curves.flatMap((c) =>
    c.buckets.map((b) => [c.group.label, formatCell(b.from), formatCell(b.to), String(b.requests), formatCell(b.median_ttft_ms)]),
  );
  return {
    id: "cached-fraction-ttft",
    title: "TTFT against the cached fraction of the prompt",
    note: "Median TTFT of the whole replay's requests in each quartile of cached tokens / prompt tokens (ttft_by_cached_fraction), at the quartile's middle: how much a cached prefix buys on this trace.",
    chart: {
      id: "cached-fraction-ttft",
      x: { title: "cached fraction of the prompt", type: "linear", min: 0, max: 1 },
      y: ms("median TTFT"),
      datasets,
      legend: curves.length > 1,
    },
    table: {
      id: "cached-fraction-ttft",
      title: "TTFT against the cached fraction of the prompt",
      columns: ["series", "from", "to", "requests", "median_ttft_ms"],
      rows,
    },
  };
}
