/**
 * The multi-turn sections of a report (x = round), drawn next to the sweeps': the hit ratio expected against
 * observed (a gap is eviction), TTFT mean and p99, and the cached tokens each tier served, stacked per run.
 */
import { points, type AxisData, type DatasetData, type ReportSection, type SeriesRun } from "./chart-data.ts";
import type { RoundLine } from "./rounds.ts";
import type { ReportTable } from "./tables.ts";
import { formatCell } from "./text-table.ts";

type Value = (l: RoundLine) => number | null | undefined;

const ROUND_AXIS: AxisData = { title: "round", type: "linear", min: 0 };
const TIERS = ["device", "host", "storage"] as const;

/** Every round of any run, ascending. */
const allRounds = (runs: readonly SeriesRun[]): number[] => [...new Set(runs.flatMap((r) => r.rounds.map((l) => l.round)))].sort((a, b) => a - b);

/** Two metrics of each run against the round, the second drawn dashed: a chart and its table (a row per round). */
function pairSection(
  runs: readonly SeriesRun[],
  id: string,
  title: string,
  note: string,
  y: AxisData,
  [first, firstValue]: [string, Value],
  [second, secondValue]: [string, Value],
): ReportSection {
  const datasets: DatasetData[] = runs.flatMap((r) => [
    { label: `${r.label} ${first}`, series: r.series, style: "line" as const, data: points(r.rounds, (l) => l.round, firstValue) },
    { label: `${r.label} ${second}`, series: r.series, style: "fit" as const, data: points(r.rounds, (l) => l.round, secondValue) },
  ]);
  const rows = allRounds(runs).map((round) => [
    `round ${round}`,
    ...runs.flatMap((r) => {
      const l = r.rounds.findLast((x) => x.round === round);
      return l === undefined ? ["-", "-"] : [formatCell(firstValue(l)), formatCell(secondValue(l))];
    }),
  ]);
  const table: ReportTable = { id, title, columns: ["round", ...runs.flatMap((r) => [`${r.label} ${first}`, `${r.label} ${second}`])], rows };
  return { id, title, note, chart: { id, x: ROUND_AXIS, y, datasets }, table };
}

/** Cached tokens per tier and round, one stack per run. */
function tierSection(runs: readonly SeriesRun[]): ReportSection {
  const id = "round-tiers";
  const datasets: DatasetData[] = runs.flatMap((r) =>
    TIERS.map((tier, shade) => ({
      label: `${r.label} ${tier}`,
      series: r.series,
      style: "bar" as const,
      stack: String(r.series),
      shade,
      data: points(
        r.rounds,
        (l) => l.round,
        (l) => l.cached_tokens_by_tier?.[tier],
      ),
    })),
  );
  const rows = runs.flatMap((r) => r.rounds.map((l) => [r.label, `round ${l.round}`, ...TIERS.map((t) => formatCell(l.cached_tokens_by_tier?.[t] ?? null))]));
  return {
    id,
    title: "Cached tokens per tier, per round",
    note: "Prompt tokens the server reported cached over each round's turns, by the tier that served them (device, host, storage); empty where the server reports no breakdown.",
    chart: { id, x: ROUND_AXIS, y: { title: "cached tokens", type: "linear", min: 0 }, datasets, stacked: true },
    table: { id, title: "Cached tokens per tier, per round", columns: ["run", "round", ...TIERS], rows },
  };
}

export function roundSections(runs: readonly SeriesRun[]): ReportSection[] {
  return [
    pairSection(
      runs,
      "round-hit-ratio",
      "Hit ratio per round: expected and observed",
      "Share of each round's prompt tokens that should come from the cache (solid) and that the server reported cached (dashed); a gap is eviction.",
      { title: "hit ratio", type: "linear", min: 0, max: 1 },
      ["expected", (l) => l.expected_hit_ratio],
      ["observed", (l) => l.observed_hit_ratio],
    ),
    pairSection(
      runs,
      "round-ttft",
      "TTFT per round: mean and P99",
      "Time to first token over each round's turns: mean (solid) and 99th percentile (dashed).",
      { title: "TTFT (ms)", type: "linear", min: 0 },
      ["mean", (l) => l.mean_ttft_ms],
      ["p99", (l) => l.p99_ttft_ms],
    ),
    tierSection(runs),
  ];
}
