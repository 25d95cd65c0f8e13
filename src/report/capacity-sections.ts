/**
 * The charts of a capacity search (warmbench capacity): for each pct its probes as points of the binding gate's value
 * against the load (request rate or concurrency), with the gate's SLO as a horizontal line and the capacity found as
 * a vertical one (a selector chooses the pct), then the capacity against the pct, one curve per search. The probes
 * are the search's evidence, each at a load the search chose, so they are drawn here and not as a rate sweep.
 */
import { parseGate } from "../gates/parse.ts";
import type { StoredSweepLine } from "../metrics/sweep-line.ts";
import type { CapacityLine } from "../schema/lines.ts";
import { points, type AxisData, type DatasetData, type ReportSection, type SeriesRun } from "./chart-data.ts";
import { verticalLine } from "./curves.ts";
import { formatCell } from "./text-table.ts";
import type { ReportRun } from "./runs.ts";

/** A probe's verdicts (a line written without gates has none). */
const gatesOf = (p: StoredSweepLine) => p.gates ?? [];
const capacityOf = (c: CapacityLine): number | null => c.capacity_request_rate ?? c.capacity_concurrency ?? null;
const isRate = (runs: ReadonlyArray<Pick<ReportRun, "capacity">>): boolean => runs.every((r) => (r.capacity ?? []).every((c) => c.search !== "concurrency"));
/** A probe's load: its rate (the estimate, a closed loop, has none and is left out) or its concurrency. */
const loadOf =
  (rate: boolean) =>
  (p: StoredSweepLine): number | null =>
    rate ? p.request_rate : p.max_concurrency;

/** The gate a pct's chart draws: the binding one (the first to fail above the capacity), else the first latency gate. */
function chartedGate(c: CapacityLine, probes: readonly StoredSweepLine[]): string | null {
  const bound = probes.flatMap((p) => gatesOf(p).map((g) => g.expr)).find((expr) => c.binding_gate?.startsWith(expr));
  return bound ?? gatesOf(probes[0]!).find((g) => !/^failed/.test(g.expr))?.expr ?? gatesOf(probes[0]!)[0]?.expr ?? null;
}

function probeDatasets(runs: readonly SeriesRun[], pct: number, rate: boolean): DatasetData[] {
  const out: DatasetData[] = [];
  for (const r of runs) {
    const c = r.capacity?.find((x) => x.shared_prefix_pct === pct);
    const probes = r.pcts.filter((p) => p.shared_prefix_pct === pct);
    if (c === undefined || probes.length === 0) continue;
    const expr = chartedGate(c, probes);
    if (expr === null) continue;
    const value = (p: StoredSweepLine) => gatesOf(p).find((g) => g.expr === expr)?.value;
    const pass = (want: boolean) => probes.filter((p) => gatesOf(p).every((g) => g.pass) === want);
    const gate = parseGate(expr);
    out.push({ label: `${r.label} ${expr} passing`, series: r.series, style: "points", data: points(pass(true), loadOf(rate), value) });
    out.push({ label: `${r.label} failing`, series: r.series, style: "marker", data: points(pass(false), loadOf(rate), value) });
    const loads = points(probes, loadOf(rate), value);
    const xs = loads.map((p) => p.x);
    if (xs.length > 0)
      out.push({
        label: `${r.label} SLO ${gate.op} ${gate.value}`,
        series: -1,
        style: "reference",
        data: [
          { x: 0, y: gate.value },
          { x: Math.max(...xs), y: gate.value },
        ],
      });
    const found = capacityOf(c);
    if (found !== null) out.push({ ...verticalLine(`${r.label} capacity ${formatCell(found)}`, found, out), series: r.series });
  }
  return out;
}

/**
 * The gate's axis. Probes above the capacity are often far past the SLO (queueing: seconds against an SLO of tens of
 * ms); on a linear scale from 0 they squash the SLO line and every passing probe onto the axis. A logarithmic scale
 * keeps both readable when the values span more than a factor of 20 and none is 0 (a log scale has no 0).
 */
export function valueAxis(ys: readonly number[]): AxisData {
  const finite = ys.filter((y) => Number.isFinite(y));
  const min = Math.min(...finite);
  const max = Math.max(...finite);
  return finite.length > 0 && min > 0 && max / min > 20
    ? { title: "gate value (log scale)", type: "logarithmic" }
    : { title: "gate value", type: "linear", min: 0 };
}

/** What a search found, for the page's first line: a pass when every pct's capacity was found (or is above the bracket). */
export function searchVerdict(runs: readonly ReportRun[]): { text: string; pass: boolean } | null {
  const searches = runs.filter((r) => (r.capacity?.length ?? 0) > 0);
  if (searches.length === 0) return null;
  const unit = isRate(searches) ? "req/s" : "requests";
  const parts = searches.flatMap((r) =>
    r.capacity!.map((c) => {
      const found = capacityOf(c);
      const value =
        c.capacity_status === "at_max"
          ? `>= ${formatCell(found)} ${unit} (the highest load probed)`
          : found === null
            ? `unknown (${c.capacity_status})`
            : `${formatCell(found)} ${unit}${c.capacity_status === "below_min" ? " (the lowest load failed)" : ""}`;
      return `${searches.length > 1 ? `${r.label} ` : ""}${c.shared_prefix_pct}%: ${value}, ${c.probes_sent} probes`;
    }),
  );
  const pass = searches.every((r) => r.capacity!.every((c) => c.capacity_status === "found" || c.capacity_status === "at_max"));
  return { text: `Capacity search: ${parts.join("; ")}.`, pass };
}

/** The probes of each pct against the load, and the capacity against the pct; none without a capacity line. */
export function capacitySections(runs: readonly SeriesRun[]): ReportSection[] {
  const searches = runs.filter((r) => (r.capacity?.length ?? 0) > 0);
  if (searches.length === 0) return [];
  const rate = isRate(searches);
  const load = rate ? "request rate (req/s)" : "concurrency (requests)";
  const pcts = [...new Set(searches.flatMap((r) => r.capacity!.map((c) => c.shared_prefix_pct)))].sort((a, b) => a - b);
  const byPct = Object.fromEntries(pcts.map((pct) => [String(pct), probeDatasets(searches, pct, rate)]));
  const selected = pcts.at(-1)!;
  const isVertical = (d: DatasetData) => d.data.length === 2 && d.data[0]!.x === d.data[1]!.x;
  const ys = Object.values(byPct).flatMap((sets) => sets.filter((d) => !isVertical(d)).flatMap((d) => d.data.map((p) => p.y)));
  const yAxis = valueAxis(ys);
  // On a log scale the capacity's vertical line starts at the lowest value drawn, not at 0 (which it cannot show).
  if (yAxis.type === "logarithmic") {
    const bottom = Math.min(...ys);
    for (const sets of Object.values(byPct)) for (const d of sets) if (isVertical(d)) d.data[0] = { ...d.data[0]!, y: bottom };
  }
  const rows = searches.flatMap((r) =>
    r.capacity!.map((c) => [
      r.label,
      String(c.shared_prefix_pct),
      formatCell(capacityOf(c)),
      (c.capacity_bracket ?? [null, null]).map((v) => formatCell(v)).join(" – "),
      c.binding_gate ?? "",
      String(c.capacity_status ?? ""),
      String(c.probes_sent ?? ""),
      formatCell(c.search_wall_s ?? null),
    ]),
  );
  const columns = ["series", "shared prefix (%)", `capacity (${rate ? "req/s" : "requests"})`, "bracket", "binding gate", "status", "probes", "search (s)"];
  return [
    {
      id: "capacity-probes",
      title: "Capacity search: the probes against the load",
      note: "Each probe's value of the gate that bounds the capacity against the load it offered (filled: every gate held; marked: one failed), the gate's SLO as a horizontal line and the capacity found as a vertical one; choose the shared-prefix % above the chart.",
      chart: {
        id: "capacity-probes",
        x: { title: load, type: "linear", min: 0 },
        y: yAxis,
        datasets: byPct[String(selected)] ?? [],
        byPct: { pcts, selected, datasets: byPct },
        legend: true,
      },
      table: {
        id: "capacity-probes",
        title: "Capacity search: the probes",
        columns: ["series", "shared prefix (%)", "probe", load, "cache_check", "verdict"],
        rows: probeRows(searches, rate),
      },
    },
    {
      id: "capacity-pct",
      title: "Capacity against the shared prefix",
      note: "The highest load at which every gate held, per shared-prefix %: how much more load the prefix cache lets the server carry within its SLO.",
      chart: {
        id: "capacity-pct",
        x: { title: "shared prefix (%)", type: "linear", min: 0, max: 100 },
        y: { title: `capacity, ${load}`, type: "linear", min: 0 },
        datasets: searches.map((r) => ({
          label: r.label,
          series: r.series,
          style: "line" as const,
          data: points(r.capacity!, (c) => c.shared_prefix_pct, capacityOf),
        })),
      },
      table: { id: "capacity-pct", title: "Capacity per shared prefix", columns, rows },
    },
  ];
}

function probeRows(runs: readonly SeriesRun[], rate: boolean): string[][] {
  return runs.flatMap((r) =>
    r.pcts.map((p) => [
      r.label,
      String(p.shared_prefix_pct),
      String(p.probe ?? ""),
      formatCell(loadOf(rate)(p)),
      String(p.cache_check),
      gatesOf(p).every((g) => g.pass)
        ? "pass"
        : `fail: ${gatesOf(p)
            .filter((g) => !g.pass)
            .map((g) => g.expr)
            .join(", ")}`,
    ]),
  );
}
