/**
 * The servers' own view of each line (`server_telemetry`, `server_reconciliation`): one panel per replica (the k-th
 * server of a line's --base-url list), each its KV usage and requests running and waiting over time, against seconds
 * from the line's first send with the line's steady-state window shaded (one line drawn at a time, chosen above the
 * panel), and the table of that replica's scrapes; then the reconciliation of the servers' counters with the client's
 * figures, every row with both. Absent when no line was scraped.
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

/**
 * One replica of one line: KV usage (%) as a line on the left axis, requests running and waiting dashed on the right
 * one, the steady-state window shaded. Empty when no scrape fell inside the line's buckets (a line shorter than the
 * interval has only the scrape before it and the one after it).
 */
function replicaSets(l: ScrapedLine, k: number): DatasetData[] {
  const r = l.telemetry.replicas[k];
  if (r === undefined) return [];
  const s = unpackReplicaSeries(r);
  const curves: DatasetData[] = [
    { label: "KV usage %", series: 0, style: "line" as const, data: curve(l.telemetry, s.kv_usage_pct) },
    { label: "requests running", series: 1, style: "dashed" as const, axis: "y2" as const, data: curve(l.telemetry, s.running) },
    { label: "requests waiting", series: 2, style: "dashed" as const, axis: "y2" as const, data: curve(l.telemetry, s.waiting) },
  ].filter((d) => d.data.length > 0);
  const w = l.window;
  if (curves.length === 0 || w === null) return curves;
  return [
    ...curves,
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

/** Replica k's panel: the lines it was scraped in (a selector picks one), and its table of every line's scrapes. */
function replicaSection(scraped: readonly ScrapedLine[], k: number, many: boolean): ReportSection | null {
  const mine = scraped.filter((l) => l.telemetry.replicas[k] !== undefined);
  const drawn = mine.filter((l) => replicaSets(l, k).length > 0);
  const first = drawn[0];
  if (first === undefined) return null;
  const urls = [...new Set(mine.map((l) => l.telemetry.replicas[k]!.url))];
  const name = many ? `Replica ${k + 1}` : "The server";
  const id = many ? `telemetry-replica-${k + 1}` : "telemetry";
  const oneUrl = urls.length === 1;
  return {
    id,
    title: `${name} over time: KV usage, requests running and waiting${oneUrl ? ` (${urls[0]})` : ""}`,
    note: `From ${many ? "this replica's" : "the server's"} /metrics, scraped during the chosen line (--scrape-interval), in the line's timeline buckets: KV cache usage on the left axis, requests running and waiting on the right; the shaded band is the line's steady-state window. The table has every line's scrapes of it and the line's summaries over all servers.`,
    chart: {
      id,
      x: { title: "seconds from the line's first send", type: "linear", min: 0 },
      y: { title: "KV usage (%)", type: "linear", min: 0, max: 100 },
      y2: { title: "requests", type: "linear", min: 0 },
      datasets: replicaSets(first, k),
      byLine: { labels: drawn.map((l) => l.label), selected: 0, datasets: drawn.map((l) => replicaSets(l, k)) },
      legend: true,
    },
    table: {
      id,
      title: `Scrapes and summaries${many ? `: replica ${k + 1}` : ""}`,
      // The server's column only where the lines' k-th server differs (runs against different servers); else it is
      // in the title.
      columns: [
        "line",
        ...(oneUrl ? [] : ["server"]),
        "dialect",
        "scrapes",
        "line's scrapes / intended",
        "peak KV usage",
        "mean queue",
        "preemptions / request",
      ],
      rows: mine.map((l) => {
        const r = l.telemetry.replicas[k]!;
        return [
          l.label,
          ...(oneUrl ? [] : [r.url]),
          r.dialect ?? "none",
          `${r.scrapes_ok}`,
          `${l.telemetry.scrapes_ok}/${l.telemetry.scrapes_intended}`,
          formatCell(keyValue(l.line, "server_kv_usage_peak")),
          formatCell(keyValue(l.line, "server_queue_mean")),
          formatCell(keyValue(l.line, "server_preemptions_per_request")),
        ];
      }),
    },
  };
}

export function telemetrySections(runs: readonly SeriesRun[]): ReportSection[] {
  const scraped = scrapedLines(runs);
  if (scraped.length === 0) return [];
  const replicas = Math.max(...scraped.map((l) => l.telemetry.replicas.length));
  const sections: ReportSection[] = [];
  for (let k = 0; k < replicas; k++) {
    const s = replicaSection(scraped, k, replicas > 1);
    if (s !== null) sections.push(s);
  }
  const reconciled = scraped.filter((l) => l.rows !== null && l.rows.length > 0);
  if (reconciled.length === 0) return sections;
  const rows = reconciled.flatMap((l) => l.rows!.map((r) => ({ l, r })));
  sections.push({
    id: "telemetry-reconciliation",
    title: "The servers' counters against the client's view",
    note: "Per line and server, each counter's delta over the measured window from /metrics beside the same figure from the client's records of the requests that server served; a bar away from 0 % is a counter (or a client) that lies: server_counters_disagree.",
    chart: {
      id: "telemetry-reconciliation",
      x: {
        title: "row of the table",
        type: "linear",
        min: -0.5,
        max: rows.length - 0.5,
        labels: rows.map(({ l, r }) => `${l.label}${r.replica === null ? "" : ` replica ${r.replica + 1}`} ${r.counter}`),
      },
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
