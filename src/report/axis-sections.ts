/**
 * The charts of what the runs vary besides the shared-prefix %, each drawn only where it applies: the load curve
 * (latency against the achieved request rate, throughput against the offered one), the cache knee (hit ratio and
 * TTFT against working_set_tokens, with the capacities), and the loop's variable (the key figures against the one
 * numeric setting the run headers differ in, as a shell loop over a server flag makes).
 */
import { axesOf, isRoundAxes } from "../schema/axes.ts";
import type { KeyName } from "../schema/key-table.ts";
import { points, type AxisData, type DatasetData, type ReportSection } from "./chart-data.ts";
import { curveSection, keyValue, varies, verticalLine, type AnyLine, type CurveSpec, type RunGroup } from "./curves.ts";
import { differingKeys, flattenHeader, shortKey } from "./labels.ts";
import { formatCell } from "./text-table.ts";

export const ms = (title: string): AxisData => ({ title: `${title} (ms)`, type: "linear", min: 0 });
export const pair = (first: [KeyName, string], second: [KeyName, string]) => [
  { key: first[0], name: first[1] },
  { key: second[0], name: second[1], dashed: true },
];
export const present = (s: ReportSection | null): s is ReportSection => s !== null;

/** An open-loop line: the rate charts leave out closed-loop lines (no rate to put them at). */
const openLoop = (l: AnyLine): boolean => {
  const a = axesOf(l);
  // A window line's rate is the trace's own in that window: it follows the window (window-sections.ts draws those).
  return !isRoundAxes(a) && Number.isFinite(a.request_rate) && a.window === undefined;
};
const offered = (l: AnyLine): number | undefined => {
  const a = axesOf(l);
  return isRoundAxes(a) ? undefined : a.request_rate;
};

/** Latency percentiles against the achieved rate, throughput and goodput against the offered one. */
export function rateSections(groups: readonly RunGroup[]): ReportSection[] {
  if (!varies(groups, (a) => (isRoundAxes(a) ? undefined : a.request_rate))) return [];
  const achieved: AxisData = { title: "achieved request rate (req/s)", type: "linear", min: 0 };
  const offeredAxis: AxisData = { title: "offered request rate (req/s)", type: "linear", min: 0 };
  const latency = (id: string, name: string, metrics: CurveSpec["metrics"], what: string): ReportSection | null =>
    curveSection(groups, {
      id,
      title: `${name} against the achieved request rate`,
      x: achieved,
      xValue: (l) => keyValue(l, "achieved_request_rate"),
      y: ms(name),
      metrics,
      over: "request_rate",
      include: openLoop,
      note: `${what}, median (solid) and P99 (dashed), at the rate the client really sent (achieved_request_rate); one curve per shared-prefix %. Where it bends up the server is saturated.`,
    });
  const perOffered = (id: string, title: string, y: AxisData, key: KeyName, note: string, diagonal: boolean): ReportSection | null =>
    curveSection(groups, {
      id,
      title,
      note,
      x: offeredAxis,
      xValue: offered,
      y,
      metrics: [{ key, name: key }],
      over: "request_rate",
      include: openLoop,
      extras: diagonal
        ? (lines) => {
            const top = Math.max(...lines.map(({ line }) => offered(line) ?? 0));
            return [
              {
                label: "completed = offered",
                series: -1,
                style: "reference",
                data: [
                  { x: 0, y: 0 },
                  { x: top, y: top },
                ],
              },
            ];
          }
        : undefined,
    });
  return [
    latency("rate-ttft", "TTFT", pair(["median_ttft_ms", "median"], ["p99_ttft_ms", "p99"]), "Time to first token"),
    latency(
      "rate-ttft-intended",
      "TTFT from the intended send",
      pair(["ttft_from_intended_median_ms", "median"], ["ttft_from_intended_p99_ms", "p99"]),
      "Time to first token counted from the schedule's send time, the client's queueing included (what a user waits)",
    ),
    latency("rate-itl", "ITL", pair(["median_itl_ms", "median"], ["p99_itl_ms", "p99"]), "Inter-token latency"),
    latency("rate-e2e", "E2E latency", pair(["median_e2e_latency_ms", "median"], ["p99_e2e_latency_ms", "p99"]), "End-to-end latency"),
    perOffered(
      "rate-throughput",
      "Output throughput against the offered request rate",
      { title: "output tokens/s", type: "linear", min: 0 },
      "output_throughput",
      "Generated tokens per second at each offered rate; it stops growing where the server saturates.",
      false,
    ),
    perOffered(
      "rate-goodput",
      "Goodput against the offered request rate",
      { title: "completed requests/s", type: "linear", min: 0 },
      "request_throughput",
      "Requests completed successfully per second (request_throughput: failures excluded) against the rate offered; below the diagonal the server falls behind.",
      true,
    ),
  ].filter(present);
}

/** Vertical lines at each capacity the lines report: the device tier, and the device and host tiers together. */
function capacityLines(lines: readonly { line: AnyLine }[], curves: readonly DatasetData[], yMax?: number): DatasetData[] {
  const device = new Set<number>();
  const total = new Set<number>();
  for (const { line } of lines) {
    const d = keyValue(line, "cache_capacity_tokens");
    const h = keyValue(line, "host_cache_capacity_tokens");
    if (d !== null) device.add(d);
    if (d !== null && h !== null && h > 0) total.add(d + h);
  }
  return [
    ...[...device].map((c) => verticalLine(`device cache capacity (${c} tokens)`, c, curves, yMax)),
    ...[...total].map((c) => verticalLine(`device + host capacity (${c} tokens)`, c, curves, yMax)),
  ];
}

/** The lines whose observed hits fell below expected, marked on a metric's curve. */
function evicting(lines: readonly { line: AnyLine }[], key: KeyName): DatasetData[] {
  const marked = lines.map((l) => l.line).filter((l) => l.eviction === true);
  return marked.length === 0
    ? []
    : [
        {
          label: "evicting (eviction: true)",
          series: -1,
          style: "marker",
          data: points(
            marked,
            (l) => keyValue(l, "working_set_tokens"),
            (l) => keyValue(l, key),
          ),
        },
      ];
}

/** Hit ratio and TTFT against the working set's tokens: the knee where it outgrows the cache. */
export function workingSetSections(groups: readonly RunGroup[]): ReportSection[] {
  if (!varies(groups, (a) => (isRoundAxes(a) ? undefined : a.working_set))) return [];
  const x: AxisData = { title: "working set (tokens, log)", type: "logarithmic" };
  const base = {
    x,
    xValue: (l: AnyLine) => keyValue(l, "working_set_tokens"),
    over: "working_set" as const,
    include: (l: AnyLine) => !isRoundAxes(axesOf(l)),
    columns: [
      ["working_set", (l: AnyLine) => formatCell(keyValue(l, "working_set"))],
      ["fits the device", (l: AnyLine) => String(l.working_set_fits ?? "n/a")],
      ["eviction", (l: AnyLine) => String(l.eviction ?? "n/a")],
      ["device capacity", (l: AnyLine) => formatCell(keyValue(l, "cache_capacity_tokens"))],
      ["host capacity", (l: AnyLine) => formatCell(keyValue(l, "host_cache_capacity_tokens"))],
    ] as CurveSpec["columns"],
  };
  const capacities = "vertical lines at the device cache capacity and at the device and host tiers together; crosses mark the lines with eviction";
  return [
    curveSection(groups, {
      ...base,
      id: "ws-hit-ratio",
      title: "Hit ratio against the working set",
      y: { title: "hit ratio", type: "linear", min: 0, max: 1 },
      metrics: pair(["observed_hit_ratio", "observed"], ["expected_hit_ratio", "expected"]),
      note: `Share of prompt tokens the server reported cached (solid) and that should be (dashed) as the working set grows; ${capacities}.`,
      extras: (lines, curves) => [...capacityLines(lines, curves, 1), ...evicting(lines, "observed_hit_ratio")],
    }),
    curveSection(groups, {
      ...base,
      id: "ws-ttft",
      title: "TTFT against the working set",
      y: ms("TTFT"),
      metrics: pair(["mean_ttft_ms", "mean"], ["p99_ttft_ms", "p99"]),
      note: `Time to first token, mean (solid) and P99 (dashed): it jumps where the prefixes no longer fit; ${capacities}.`,
      extras: (lines, curves) => [...capacityLines(lines, curves), ...evicting(lines, "mean_ttft_ms")],
    }),
  ].filter(present);
}

const isNumber = (v: string | undefined): boolean => v !== undefined && v.trim() !== "" && Number.isFinite(Number(v));

/**
 * The one setting the runs differ in, when it is numeric: a header key (or several keys always equal, as
 * options.page_size and page_size) whose value differs and is a number in every run, and nothing else differs.
 */
function loopSetting(groups: readonly RunGroup[]): { name: string; value: Map<number, number> } | null {
  if (groups.length < 2) return null;
  const headers = groups.map((g) => flattenHeader(g.header));
  const vectors = new Map<string, string>();
  for (const key of differingKeys(headers)) {
    const values = headers.map((h) => h.get(key));
    if (!values.every(isNumber)) return null;
    const vector = JSON.stringify(values.map(Number));
    if (!vectors.has(vector)) vectors.set(vector, key);
  }
  if (vectors.size !== 1) return null;
  const [vector, key] = [...vectors][0]!;
  const numbers = JSON.parse(vector) as number[];
  return { name: shortKey(key), value: new Map(groups.map((g, i) => [g.index, numbers[i]!])) };
}

/** The key figures at each place (pct, cell or round) against the loop's setting: one curve per place, through every run. */
export function loopSections(groups: readonly RunGroup[]): ReportSection[] {
  const setting = loopSetting(groups);
  if (setting === null) return [];
  const values = [...setting.value.values()];
  const spread = Math.min(...values) > 0 && Math.max(...values) / Math.min(...values) >= 8;
  const x: AxisData = spread ? { title: `${setting.name} (log)`, type: "logarithmic" } : { title: setting.name, type: "linear" };
  const base = { x, xValue: (_l: AnyLine, g: RunGroup) => setting.value.get(g.index), across: true };
  const note = (what: string) =>
    `${what} in each run against ${setting.name}, the one setting the runs differ in; one curve per shared-prefix % (or cell, or round).`;
  return [
    curveSection(groups, {
      ...base,
      id: "loop-ttft",
      title: `TTFT against ${setting.name}`,
      y: ms("TTFT"),
      metrics: pair(["mean_ttft_ms", "mean"], ["p99_ttft_ms", "p99"]),
      note: note("Time to first token, mean (solid) and P99 (dashed),"),
    }),
    curveSection(groups, {
      ...base,
      id: "loop-throughput",
      title: `Output throughput against ${setting.name}`,
      y: { title: "output tokens/s", type: "linear", min: 0 },
      metrics: [{ key: "output_throughput", name: "output_throughput" }],
      note: note("Generated tokens per second"),
    }),
    curveSection(groups, {
      ...base,
      id: "loop-itl",
      title: `ITL against ${setting.name}`,
      y: ms("ITL"),
      metrics: pair(["mean_itl_ms", "mean"], ["p99_itl_ms", "p99"]),
      note: note("Inter-token latency, mean (solid) and P99 (dashed),"),
    }),
  ].filter(present);
}
