/**
 * The cache-fidelity table of a report (lines measured with --check-fidelity): per line, how many greedy answers after
 * a cache hit were the answers after a flush, near ties, divergences or unclassified, and where they first differed;
 * the chart stacks the verdicts per shared-prefix %, one stack per run. Absent when no line was checked.
 */
import type { StoredSweepLine } from "../metrics/sweep-line.ts";
import { points, type DatasetData, type ReportSection, type SeriesRun } from "./chart-data.ts";
import { pointLabel } from "./line-label.ts";
import { formatCell } from "./text-table.ts";

const VERDICTS = [
  ["identical", (l: StoredSweepLine) => l.fidelity_identical],
  ["near tie", (l: StoredSweepLine) => l.fidelity_near_tie],
  ["diverged", (l: StoredSweepLine) => l.fidelity_diverged],
  ["unclassified", (l: StoredSweepLine) => l.fidelity_unclassified],
] as const;

const checked = (l: StoredSweepLine): boolean => typeof l.fidelity_checked === "number";

/** One row per checked line: the counts, the first differing positions and the largest gap. */
function fidelityRows(runs: ReadonlyArray<{ label: string; pcts: readonly StoredSweepLine[] }>): string[][] {
  return runs.flatMap((r) =>
    r.pcts
      .filter(checked)
      .map((l) => [
        r.label,
        pointLabel(l),
        ...[l.fidelity_checked, ...VERDICTS.map(([, v]) => v(l)), l.fidelity_unproven].map((v) => String(v ?? "")),
        (l.fidelity_first_divergence ?? []).join(" ") || "-",
        formatCell(l.fidelity_max_gap_nats ?? null),
        l.fidelity_note ?? "",
      ]),
  );
}

const FIDELITY_COLUMNS = [
  "run",
  "line",
  "checked",
  "identical",
  "near tie",
  "diverged",
  "unclassified",
  "unproven",
  "first differing token",
  "largest gap (nats)",
  "note",
];

export function fidelitySections(runs: readonly SeriesRun[]): ReportSection[] {
  const rows = fidelityRows(runs);
  if (rows.length === 0) return [];
  const id = "fidelity";
  const datasets: DatasetData[] = runs.flatMap((r) =>
    VERDICTS.map(([name, value], shade) => ({
      label: `${r.label} ${name}`,
      series: r.series,
      style: "bar" as const,
      stack: String(r.series),
      shade,
      data: points(r.pcts.filter(checked), (l) => l.shared_prefix_pct, value),
    })),
  );
  return [
    {
      id,
      title: "Cache fidelity: are warm answers the same answers?",
      note: "Greedy answers after a proven cache hit against the same prompts' answers after a proven flush (--check-fidelity): a near tie is a flip between two tokens within --fidelity-tie-nats of each other; a divergence is what no tie explains (suspect wrong KV).",
      chart: { id, x: { title: "shared prefix (%)", type: "linear", min: 0 }, y: { title: "answers", type: "linear", min: 0 }, datasets, stacked: true },
      table: { id, title: "Cache fidelity", columns: FIDELITY_COLUMNS, rows },
    },
  ];
}
