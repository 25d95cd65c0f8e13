/**
 * The hit-loss ledger of lines served by several replicas: per line, the hits one shared cache would have given and
 * where they went (lost to routing, to eviction, in the engine), one stack per line along an axis of routing policies
 * (the question is which policy loses what, not how a pct does); and the per-replica split (requests, hits, TTFT).
 * Absent when no line was routed.
 */
import type { StoredSweepLine } from "../metrics/sweep-line.ts";
import { points, type DatasetData, type ReportSection, type SeriesRun } from "./chart-data.ts";
import { pointLabel } from "./line-label.ts";
import { formatCell } from "./text-table.ts";

const routed = (l: StoredSweepLine): boolean => typeof l.ledger_available_tokens === "number";

/** The losses, in percent of the available hits: what a policy gives away, and where. */
const pct = (v: number | null | undefined): number | null => (typeof v === "number" ? v * 100 : null);
const PARTS = [
  ["lost to routing", (l: StoredSweepLine) => pct(l.loss_routing_ratio)],
  ["lost to eviction", (l: StoredSweepLine) => pct(l.loss_eviction_ratio)],
  ["lost in the engine", (l: StoredSweepLine) => pct(l.loss_engine_ratio)],
] as const;

export function ledgerSections(runs: readonly SeriesRun[]): ReportSection[] {
  const lines = runs.flatMap((r) => r.pcts.filter(routed).map((l) => ({ r, l })));
  if (lines.length === 0) return [];
  const id = "ledger";
  // One place per line, by policy: "round-robin", or "round-robin 90%" where lines of one policy differ.
  const byPolicy = [...lines].sort((a, b) => String(a.l.route).localeCompare(String(b.l.route)));
  const sameRoute = (route: unknown) => byPolicy.filter((x) => x.l.route === route).length;
  const names = byPolicy.map(({ r, l }) => {
    const route = String(l.route ?? "");
    if (sameRoute(l.route) === 1) return route;
    const place = `${route} ${pointLabel(l)}`;
    return byPolicy.filter((x) => x.l.route === l.route && pointLabel(x.l) === pointLabel(l)).length > 1 ? `${place} (${r.label})` : place;
  });
  const datasets: DatasetData[] = PARTS.map(([name, value], part) => ({
    label: name,
    series: part,
    style: "bar" as const,
    stack: "ledger",
    shade: 0,
    data: byPolicy.flatMap(({ l }, x) => {
      const y = value(l);
      return y === null ? [] : [{ x, y }];
    }),
  }));
  const ratio = (v: number | null | undefined) => (typeof v === "number" ? `${formatCell(v * 100)}%` : "n/a");
  const rows = lines.map(({ r, l }) => [
    r.label,
    pointLabel(l),
    String(l.route ?? ""),
    String(l.ledger_requests ?? ""),
    String(l.ledger_available_tokens),
    String(l.ledger_home_tokens ?? "n/a"),
    String(l.ledger_on_replica_tokens),
    String(l.ledger_modelled_tokens),
    String(l.ledger_possible_tokens ?? "n/a"),
    String(l.ledger_delivered_tokens),
    ratio(l.loss_routing_ratio),
    ratio(l.loss_eviction_ratio),
    ratio(l.loss_engine_ratio),
    formatCell(l.routing_imbalance ?? null),
  ]);
  const replicaRows = lines.flatMap(({ r, l }) =>
    (l.replicas ?? []).map((x) => [
      r.label,
      pointLabel(l),
      x.url,
      String(x.requests),
      String(x.available_tokens),
      String(x.delivered_tokens),
      formatCell(x.mean_ttft_ms),
    ]),
  );
  return [
    {
      id,
      title: "Where the cache hits went: the hit-loss ledger",
      note: "Per line, by routing policy, the hits one cache shared by every replica would have given (available) that were lost, stacked by where: to routing (against every request at its prefix's home), to eviction (the capacities, even at home) and in the engine (hits below what the cache model guarantees: 0 on a correct server). The table has the tokens.",
      chart: {
        id,
        x: { title: "routing policy (one bar per line)", type: "linear", min: -0.5, max: byPolicy.length - 0.5, labels: names },
        y: { title: "hits lost (% of available)", type: "linear" },
        datasets,
        stacked: true,
      },
      table: {
        id,
        title: "Hit-loss ledger",
        columns: [
          "run",
          "line",
          "route",
          "requests",
          "available",
          "home",
          "on replica",
          "guaranteed",
          "possible",
          "delivered",
          "lost: routing",
          "lost: eviction",
          "lost: engine",
          "imbalance",
        ],
        rows,
      },
    },
    {
      id: "ledger-replicas",
      title: "Per replica",
      note: "What each replica served: requests, the hits available to them and delivered, and their mean TTFT.",
      chart: {
        id: "ledger-replicas",
        x: { title: "shared prefix (%)", type: "linear", min: 0 },
        y: { title: "requests", type: "linear", min: 0 },
        datasets: runs.flatMap((r) => {
          const urls = [...new Set(r.pcts.filter(routed).flatMap((l) => (l.replicas ?? []).map((x) => x.url)))];
          return urls.map((url, shade) => ({
            label: `${r.label} ${url}`,
            series: r.series,
            style: "bar" as const,
            stack: String(r.series),
            shade,
            data: points(
              r.pcts.filter(routed),
              (l) => l.shared_prefix_pct,
              (l) => l.replicas?.find((x) => x.url === url)?.requests,
            ),
          }));
        }),
        stacked: true,
      },
      table: {
        id: "ledger-replicas",
        title: "Per replica",
        columns: ["run", "line", "replica", "requests", "available", "delivered", "mean TTFT (ms)"],
        rows: replicaRows,
      },
    },
  ];
}
