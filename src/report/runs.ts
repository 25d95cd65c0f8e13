/** The runs of several results files, each with its header, its lines, its TTFT model and a label. */
import { formatRate } from "./line-label.ts";
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { UsageError } from "../errors.ts";
import type { RunInfo } from "../schema/nested.ts";
import type { TtftModel } from "../metrics/ttft-model.ts";
import type { CapacityLine } from "../schema/lines.ts";
import type { LineKind } from "../schema/key-table.ts";
import type { StoredSweepLine } from "../metrics/sweep-line.ts";
import { labelRuns } from "./labels.ts";

import { parseJsonlLine } from "./jsonl.ts";
import { readPointRuns } from "./point-runs.ts";
import type { RoundLine } from "./rounds.ts";

/** One run of one file, ready to chart: a sweep (its pct lines) or a multi-turn run (its round lines). */
export interface ReportRun {
  file: string;
  runId: string | null;
  kind: LineKind;
  /** The run's header (the `run` key of its first line); undefined for files without one. */
  header: RunInfo | undefined;
  /** A sweep's lines ([] for a multi-turn run). */
  pcts: StoredSweepLine[];
  /** A multi-turn run's lines ([] for a sweep). */
  rounds: RoundLine[];
  /** A capacity search's result per pct (its probes are `pcts`); absent for any other run. */
  capacity?: CapacityLine[];
  ttftModel: TtftModel | null;
  /** What tells it apart from the other runs (see labels.ts). */
  label: string;
  /**
   * The run as measured, before splitByCell cut it into one series per (working set, rate) cell: its index among the
   * report's measured runs and its label without the cell. Absent: the run is its own group.
   */
  group?: { index: number; label: string };
}

/** A results file's text, or a UsageError naming the file and the flag or command that wanted it. */
export function readResultsText(file: string, who: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw new UsageError(`${who}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
}

/** Every run of every file, in order (a file's sweeps, then its multi-turn runs), labelled against each other. */
export function loadReportRuns(files: readonly string[], who = "report"): { runs: ReportRun[]; differing: string[] } {
  const unlabelled: Array<Omit<ReportRun, "label"> & { fallbackName: string }> = [];
  for (const file of files) {
    const text = readResultsText(file, who);
    const runs = readPointRuns(text, file).map((run) => ({
      file,
      runId: run.runId,
      kind: run.kind,
      header: (run.lines as Array<{ run?: RunInfo }>).find((l) => l.run !== undefined)?.run,
      pcts: run.kind === "sweep" ? run.lines : [],
      rounds: run.kind === "round" ? run.lines : [],
      ttftModel: run.ttftModel,
      ...capacityOf(text, run.runId),
    }));
    if (runs.length === 0) throw new UsageError(`${who}: ${file} holds no results line (neither a pct line nor a round line)`);
    for (const [i, run] of runs.entries()) unlabelled.push({ ...run, fallbackName: runs.length > 1 ? `${basename(file)}#${i + 1}` : basename(file) });
  }
  const { labels, differing } = labelRuns(unlabelled);
  const runs = unlabelled.flatMap(({ fallbackName: _f, ...run }, i) => splitByCell({ ...run, label: labels[i]!, group: { index: i, label: labels[i]! } }));
  return { runs, differing };
}

/** The capacity lines of a run (warmbench capacity writes them after its probes, with the same run_id). */
function capacityOf(text: string, runId: string | null): { capacity?: CapacityLine[] } {
  if (runId === null || !text.includes('"capacity"')) return {};
  const lines = text
    .split("\n")
    .filter((raw) => raw.includes('"capacity"') && raw.includes(runId))
    .map((raw) => parseJsonlLine(raw.trim()) as CapacityLine)
    .filter((l) => l.type === "capacity" && l.run_id === runId);
  return lines.length > 0 ? { capacity: lines } : {};
}

/**
 * A run that swept request rates or working sets holds several lines per pct: one series per (working set, rate),
 * each a curve over the pcts, labelled with what sets it apart ("run @ 8 req/s", "run ws=4").
 */
export function splitByCell(run: ReportRun): ReportRun[] {
  // A search's probes sit at the loads it chose, a replay's windows at the trace's own rate: one run each, not cells.
  if (run.capacity !== undefined || run.pcts.some((l) => typeof l.window === "number" || typeof l.block_size === "number")) return [run];
  const ws = (l: StoredSweepLine) => (typeof l.working_set === "number" ? l.working_set : 1);
  const rate = (l: StoredSweepLine) => (Number.isFinite(l.request_rate) ? `${formatRate(l.request_rate)} req/s` : "inf");
  const byWs = new Set(run.pcts.map(ws)).size > 1;
  const byRate = new Set(run.pcts.map(rate)).size > 1;
  if (!byWs && !byRate) return [run];
  const cellOf = (l: StoredSweepLine) => `${byWs ? ` ws=${ws(l)}` : ""}${byRate ? ` @ ${rate(l)}` : ""}`;
  const cells = [...new Set(run.pcts.map(cellOf))];
  return cells.map((cell) => ({ ...run, pcts: run.pcts.filter((l) => cellOf(l) === cell), label: `${run.label}${cell}` }));
}

/** The run just measured, as a report run (for its step summary). */
export function reportRunOf(records: readonly StoredSweepLine[], name: string, ttftModel: TtftModel | null): ReportRun {
  return {
    file: name,
    runId: records[0]?.run_id ?? null,
    kind: "sweep",
    header: records.find((p) => p.run !== undefined)?.run,
    pcts: [...records],
    rounds: [],
    ttftModel,
    label: basename(name),
  };
}
