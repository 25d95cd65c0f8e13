/** The runs of several results files, each with its header, its lines, its TTFT model and a label. */
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { UsageError } from "../errors.ts";
import type { RunInfo } from "../metrics/pct-record.ts";
import type { TtftModel } from "../metrics/ttft-model.ts";
import type { PctLine } from "../metrics/pct-record.ts";
import { labelRuns } from "./labels.ts";
import { readResults } from "./results-file.ts";

/** One run of one file, ready to chart. */
export interface ReportRun {
  file: string;
  runId: string | null;
  /** The run's header (the `run` key of its first line); undefined for files without one. */
  header: RunInfo | undefined;
  pcts: PctLine[];
  ttftModel: TtftModel | null;
  /** What tells it apart from the other runs (see labels.ts). */
  label: string;
}

/** A results file's text, or a UsageError naming the file and the flag or command that wanted it. */
export function readResultsText(file: string, who: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw new UsageError(`${who}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
}

/** Every run of every file, in order, labelled against each other; a file without a pct line is a UsageError. */
export function loadReportRuns(files: readonly string[], who = "report"): { runs: ReportRun[]; differing: string[] } {
  const unlabelled: Array<Omit<ReportRun, "label"> & { fallbackName: string }> = [];
  for (const file of files) {
    const runs = readResults(readResultsText(file, who), file);
    if (runs.length === 0) throw new UsageError(`${who}: ${file} holds no pct line`);
    runs.forEach((run, i) => {
      const header = run.pcts.find((p) => p.run !== undefined)?.run;
      const fallbackName = runs.length > 1 ? `${basename(file)}#${i + 1}` : basename(file);
      unlabelled.push({ file, runId: run.runId, header, pcts: run.pcts, ttftModel: run.ttftModel, fallbackName });
    });
  }
  const { labels, differing } = labelRuns(unlabelled);
  const runs = unlabelled.flatMap(({ fallbackName: _f, ...run }, i) => splitByCell({ ...run, label: labels[i]! }));
  return { runs, differing };
}

/**
 * A run that swept request rates or working sets holds several lines per pct: one series per (working set, rate),
 * each a curve over the pcts, labelled with what sets it apart ("run @ 8 req/s", "run ws=4").
 */
export function splitByCell(run: ReportRun): ReportRun[] {
  const ws = (l: PctLine) => (typeof l.working_set === "number" ? l.working_set : 1);
  const rate = (l: PctLine) => (Number.isFinite(l.request_rate) ? `${l.request_rate} req/s` : "inf");
  const byWs = new Set(run.pcts.map(ws)).size > 1;
  const byRate = new Set(run.pcts.map(rate)).size > 1;
  if (!byWs && !byRate) return [run];
  const cellOf = (l: PctLine) => `${byWs ? ` ws=${ws(l)}` : ""}${byRate ? ` @ ${rate(l)}` : ""}`;
  const cells = [...new Set(run.pcts.map(cellOf))];
  return cells.map((cell) => ({ ...run, pcts: run.pcts.filter((l) => cellOf(l) === cell), label: `${run.label}${cell}` }));
}

/** The run just measured, as a report run (for its step summary). */
export function reportRunOf(records: readonly PctLine[], name: string, ttftModel: TtftModel | null): ReportRun {
  return { file: name, runId: records[0]?.run_id ?? null, header: records.find((p) => p.run !== undefined)?.run, pcts: [...records], ttftModel, label: basename(name) };
}
