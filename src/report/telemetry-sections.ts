/**
 * The servers' own view of each line (`server_telemetry`, `server_reconciliation`): KV usage and requests waiting
 * over time, one curve per replica, against seconds from the line's first send with its steady-state window shaded
 * (one line drawn at a time, chosen above the chart); and the reconciliation of the servers' counters with the
 * client's figures, every row with both. Absent when no line was scraped.
 */
import { labelOf } from "../schema/axes.ts";
import type { SteadyState } from "../schema/timeline-shape.ts";
import { unpackReplicaSeries } from "../metrics/telemetry-series.ts";
import type { DatasetData, ReportSection, SeriesRun } from "./chart-data.ts";
import { groupsOf, keyValue, type AnyLine } from "./curves.ts";
import { formatCell } from "./text-table.ts";

interface ScrapedReplica {
  url: string;
  dialect: string | null;
  scrapes_ok: number;
  kv_usage_pct: string;
  running: string;
  waiting: string;
}
interface Scraped {
  interval_ms: number;
  scrapes_intended: number;
  scrapes_ok: number;
  scrapes_failed: number;
  bucket_s: number;
  buckets: number;
  replicas: ScrapedReplica[];
}
interface Row {
  replica: number | null;
  url: string;
  counter: string;
  server: number;
  client: number;
  agrees: boolean;
}

interface ScrapedLine {
  label: string;
  line: AnyLine;
  telemetry: Scraped;
  rows: Row[] | null;
  window: SteadyState | null;
}

function scrapedLines(runs: readonly SeriesRun[]): ScrapedLine[] {
  const groups = groupsOf(runs);
  return groups.flatMap((g) =>
    g.lines.flatMap((line) => {
      const l = line as { server_telemetry?: Scraped | null; server_reconciliation?: Row[] | null; steady_state?: SteadyState | null };
      if (!l.server_telemetry || l.server_telemetry.buckets === 0) return [];
      const place = labelOf(line);
      return [
        {
          label: groups.length > 1 ? `${g.label} · ${place}` : place,
          line,
          telemetry: l.server_telemetry,
          rows: l.server_reconciliation ?? null,
          window: l.steady_state ?? null,
        },
      ];
    }),
  );
}

const midS = (t: Scraped, k: number): number => (k + 0.5) * t.bucket_s;

function curve(t: Scraped, values: readonly (number | null)[]): { x: number; y: number }[] {
  return values.flatMap((v, k) => (v === null ? [] : [{ x: midS(t, k), y: v }]));
}

/** Per replica: KV usage (%) as a line, requests waiting dashed on the right axis; the steady-state window shaded. */
function telemetrySets(l: ScrapedLine): DatasetData[] {
  const t = l.telemetry;
  const many = t.replicas.length > 1;
  const curves: DatasetData[] = t.replicas.flatMap((r, i) => {
    const s = unpackReplicaSeries(r);
    const name = many ? ` (${r.url})` : "";
    return [
      { label: `KV usage %${name}`, series: i, style: "line" as const, data: curve(t, s.kv_usage_pct) },
      { label: `requests waiting${name}`, series: i, style: "dashed" as const, axis: "y2" as const, data: curve(t, s.waiting) },
    ];
  });
  const w = l.window;
  if (w === null) return curves.filter((d) => d.data.length > 0);
  return [
    ...curves.filter((d) => d.data.length > 0),
    {
      label: `steady state (>= ${Math.round(w.rule * 100)} % of peak in flight)`,
      series: -1,
      style: "window",
      data: [
        { x: w.start_s, y: 100 },
        { x: w.end_s, y: 100 },
      ],
    },
  ];
}

export function telemetrySections(runs: readonly SeriesRun[]): ReportSection[] {
  const scraped = scrapedLines(runs);
  if (scraped.length === 0) return [];
  // A line shorter than the interval has no scrape inside its buckets (only the one before and the one after it).
  const lines = scraped.filter((l) => telemetrySets(l).some((d) => d.style !== "window"));
  const perReplica = scraped.flatMap((l) =>
    l.telemetry.replicas.map((r) => [
      l.label,
      r.url,
      r.dialect ?? "none",
      `${r.scrapes_ok}`,
      `${l.telemetry.scrapes_ok}/${l.telemetry.scrapes_intended}`,
      formatCell(keyValue(l.line, "server_kv_usage_peak")),
      formatCell(keyValue(l.line, "server_queue_mean")),
      formatCell(keyValue(l.line, "server_preemptions_per_request")),
    ]),
  );
  const reconciled = scraped.filter((l) => l.rows !== null && l.rows.length > 0);
  const first = lines[0];
  const sections: ReportSection[] = [];
  if (first !== undefined)
    sections.push({
      id: "telemetry",
      title: "The servers over time: KV usage and requests waiting",
      note: "From each server's /metrics, scraped during the chosen line (--scrape-interval): KV cache usage and requests waiting, one colour per replica, in the line's timeline buckets; the shaded band is its steady-state window. The table has every line's scrapes and summaries.",
      chart: {
        id: "telemetry",
        x: { title: "seconds from the line's first send", type: "linear", min: 0 },
        y: { title: "KV usage (%)", type: "linear", min: 0, max: 100 },
        y2: { title: "requests waiting", type: "linear", min: 0 },
        datasets: telemetrySets(first),
        byLine: { labels: lines.map((l) => l.label), selected: 0, datasets: lines.map(telemetrySets) },
        legend: true,
      },
      table: {
        id: "telemetry",
        title: "Scrapes and summaries",
        columns: ["line", "server", "dialect", "scrapes", "line's scrapes / intended", "peak KV usage", "mean queue", "preemptions / request"],
        rows: perReplica,
      },
    });
  if (reconciled.length === 0) return sections;
  const rows = reconciled.flatMap((l) => l.rows!.map((r) => ({ l, r })));
  sections.push({
    id: "telemetry-reconciliation",
    title: "The servers' counters against the client's view",
    note: "Per line and server, each counter's delta over the measured window from /metrics beside the same figure from the client's records of the requests that server served; a bar away from 0 % is a counter (or a client) that lies: server_counters_disagree.",
    chart: {
      id: "telemetry-reconciliation",
      x: { title: "row of the table", type: "linear", min: -0.5, max: rows.length - 0.5, labels: rows.map(({ l, r }) => `${l.label} ${r.counter}`) },
      y: { title: "server - client (% of client)", type: "linear" },
      datasets: [
        {
          label: "server - client",
          series: 0,
          style: "bar",
          data: rows.map(({ r }, x) => ({ x, y: r.client === 0 ? (r.server === 0 ? 0 : 100) : ((r.server - r.client) / r.client) * 100 })),
        },
      ],
    },
    table: {
      id: "telemetry-reconciliation",
      title: "Reconciliation",
      columns: ["line", "server", "counter", "server's /metrics", "client's records", "agrees"],
      rows: rows.map(({ l, r }) => [l.label, r.url, r.counter, formatCell(r.server), formatCell(r.client), r.agrees ? "yes" : "NO"]),
    },
  });
  return sections;
}
