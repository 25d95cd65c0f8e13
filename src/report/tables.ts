/**
 * The numbers of a multi-run report as plain tables: the HTML report shows each under its chart, the Markdown
 * report is these tables alone. Every cell is a string, formatted once here.
 */
import { basename } from "node:path";
import type { StoredSweepLine } from "../metrics/sweep-line.ts";
import { isSearchStep } from "../schema/axes.ts";
import { pointLabel } from "./line-label.ts";
import { HDR_PERCENTILES, hdrPercentileMs, linePercentileMs, type HdrSeries } from "./hdr-stats.ts";
import { flattenHeader } from "./labels.ts";
import type { RoundLine } from "./rounds.ts";
import type { ReportRun } from "./runs.ts";
import { formatCell } from "./text-table.ts";

export interface ReportTable {
  id: string;
  title: string;
  columns: string[];
  rows: string[][];
}

/** Every pct of any run, ascending. */
export function allPcts(runs: readonly ReportRun[]): number[] {
  return [...new Set(runs.flatMap((r) => r.pcts.map((p) => p.shared_prefix_pct)))].sort((a, b) => a - b);
}

/** A run's line for a pct (the last, if the sweep repeated it). */
export const lineAt = (run: ReportRun, pct: number): StoredSweepLine | undefined => run.pcts.findLast((p) => p.shared_prefix_pct === pct);

/** A metric of the pct lines with a row per pct and a column per run. */
export function pctTable(runs: readonly ReportRun[], id: string, title: string, value: (line: StoredSweepLine) => number | null | undefined): ReportTable {
  const rows = allPcts(runs).map((pct) => [
    `${pct}%`,
    ...runs.map((r) => {
      const line = lineAt(r, pct);
      return line === undefined ? "-" : formatCell(value(line));
    }),
  ]);
  return { id, title, columns: ["pct", ...runs.map((r) => r.label)], rows };
}

/** Expected against observed cached tokens, a row per run and pct. */
export function cacheTable(runs: readonly ReportRun[]): ReportTable {
  const rows: string[][] = [];
  for (const r of runs) {
    for (const l of r.pcts) {
      rows.push([
        r.label,
        pointLabel(l),
        formatCell(l.expected_cached_tokens),
        formatCell(l.mean_cached_tokens),
        formatCell(l.min_cached_tokens),
        formatCell(l.max_cached_tokens),
        formatCell(l.cached_tokens_mismatched),
        l.cache_check ?? "n/a",
      ]);
    }
  }
  return {
    id: "cached-tokens",
    title: "Cached tokens per request: expected and reported by the server",
    columns: ["run", "pct", "expected", "observed mean", "min", "max", "requests mismatched", "cache check"],
    rows,
  };
}

/** Percentiles of one latency series, a row per run and pct: the line's own (numpy's) where it holds them, p99.9 and max from its histogram. */
export function distributionTable(runs: readonly ReportRun[], series: HdrSeries, title: string): ReportTable {
  const rows: string[][] = [];
  for (const r of runs) {
    for (const l of r.pcts) {
      rows.push([
        r.label,
        pointLabel(l),
        ...HDR_PERCENTILES.map((p) => formatCell(linePercentileMs(l, series, p.percentile).value)),
        formatCell(hdrPercentileMs(l.hdr, series, 100)),
      ]);
    }
  }
  return { id: `${series}-distribution`, title, columns: ["run", "pct", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms"], rows };
}

/** The fitted TTFT model of each run. */
export function modelTable(runs: readonly ReportRun[]): ReportTable {
  return {
    id: "ttft-model",
    title: "TTFT model: TTFT = fixed + prefill cost x uncached tokens, fitted over every request of a run",
    columns: ["run", "requests", "fixed overhead ms", "prefill µs/uncached token", "R²"],
    rows: runs.map((r) => {
      const m = r.ttftModel;
      return m === null
        ? [r.label, "n/a", "n/a", "n/a", "n/a"]
        : [r.label, String(m.n), formatCell(m.fixed_ms), formatCell(m.prefill_us_per_token, 3), formatCell(m.r2, 4)];
    }),
  };
}

/** A run's lines, whatever its kind, each with the label of its place on the run's x axis ("50%", "round 3"). */
function placedLines(r: ReportRun): Array<{ line: StoredSweepLine | RoundLine; at: string }> {
  return r.kind === "round" ? r.rounds.map((line) => ({ line, at: `round ${line.round}` })) : r.pcts.map((line) => ({ line, at: pointLabel(line) }));
}

/**
 * Every gate verdict of every run. A search step's verdicts (a capacity probe's) are not among them: a search sends
 * steps above the capacity on purpose, and their failures steer it (drawn in its own section), not verdicts of the run.
 */
export function gatesTable(runs: readonly ReportRun[]): ReportTable {
  const rows: string[][] = [];
  for (const r of runs) {
    for (const { line, at } of placedLines(r)) {
      if (isSearchStep(line)) continue;
      for (const g of line.gates ?? []) rows.push([r.label, at, g.expr, formatCell(g.value), g.pass ? "pass" : "FAIL"]);
    }
  }
  return { id: "gates", title: "Gates", columns: ["run", "line", "gate", "value", "verdict"], rows };
}

/** What a run sent: prompts x tokens -> output for a sweep, clients x rounds for a multi-turn run. */
function workloadCell(r: ReportRun): string {
  const f = r.rounds[0];
  if (f !== undefined) return `${f.num_clients} clients x ${f.num_rounds} rounds, turn ${f.turn_tokens} -> ${f.output_len}`;
  const p = r.pcts[0]!;
  return `${p.num_prompts} x ${p.total_tokens} -> ${p.output_len}`;
}

/** What each run was: file, when, against what, with which workload. */
export function metadataTable(runs: readonly ReportRun[]): ReportTable {
  // A cache passport (--passport) informed a run: what it measured, beside the run (a column only when one did).
  const passportOf = (r: ReportRun) =>
    (r.header?.options as { passport?: { file: string; page_size: number | null; capacity_tokens: number | null } } | undefined)?.passport;
  const anyPassport = runs.some((r) => passportOf(r) !== undefined);
  const passportCell = (r: ReportRun): string[] => {
    if (!anyPassport) return [];
    const p = passportOf(r);
    return [p === undefined ? "-" : `${basename(p.file)}: page ${p.page_size ?? "?"}, capacity ${p.capacity_tokens ?? "?"} tokens`];
  };
  return {
    id: "runs",
    title: "Runs",
    columns: [
      "run",
      "file",
      "run id",
      "started",
      "warmbench",
      "backend",
      "model",
      "server",
      "workload",
      "concurrency",
      "lines",
      ...(anyPassport ? ["cache passport"] : []),
    ],
    rows: runs.map((r) => {
      const placed = placedLines(r);
      const first = placed[0]!.line;
      const h = r.header;
      return [
        r.label,
        basename(r.file),
        r.runId ?? "-",
        h?.started_at ?? first.started_at ?? "-",
        h?.warmbench_version ?? first.warmbench_version ?? "-",
        first.backend ?? "-",
        first.model ?? h?.served_model ?? "-",
        h?.server_version ?? first.server_version ?? "-",
        workloadCell(r),
        first.max_concurrency ? String(first.max_concurrency) : "unlimited",
        placed.map((p) => p.at).join(", "),
        ...passportCell(r),
      ];
    }),
  };
}

/** The settings that differ between the runs (what the labels are made of), a row per setting. */
export function differencesTable(runs: readonly ReportRun[], differing: readonly string[]): ReportTable {
  const headers = runs.map((r) => flattenHeader(r.header));
  return {
    id: "differences",
    title: "Settings that differ between the runs",
    columns: ["setting", ...runs.map((r) => r.label)],
    rows: differing.map((k) => [k, ...headers.map((h) => h.get(k) ?? "(none)")]),
  };
}
