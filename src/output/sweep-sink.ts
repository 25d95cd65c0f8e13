/**
 * The sweep's sink as the command line builds it: each line's banner and result on the console (stdout), its JSONL
 * line appended and fsynced, its requests' details and prompts (the results writer), live progress on stderr, and
 * after the last line the sweep's TTFT model and (in GitHub Actions) the step summary.
 */
import { log } from "../log.ts";
import { guardedWrite } from "../write-guard.ts";
import type { RunOptions } from "../config/options.ts";
import { renderConsole, renderLineHeader, renderSweepEnd } from "../report/console.ts";
import { renderMarkdownReport } from "../report/markdown.ts";
import { renderRepeats } from "../report/repeats.ts";
import { reportRunOf } from "../report/runs.ts";
import { formatCell } from "../report/text-table.ts";
import type { SweepSink } from "../sweep/sink.ts";
import { formatRequestDetail } from "./details.ts";
import { openResultsWriter } from "./results-writer.ts";
import { startProgress } from "./progress.ts";
import { appendStepSummary } from "./step-summary.ts";

type SinkOptions = Pick<RunOptions, "outputFile" | "dumpPrompts" | "requestDetails" | "quiet"> & Partial<Pick<RunOptions, "repeat" | "gates">>;

/** Opens the run's output files (openResultsWriter: a usage error before anything is sent) and returns the sink. */
export function openSweepSink(opts: SinkOptions, out: (text: string) => void, env: Record<string, string | undefined> = process.env): SweepSink {
  const files = openResultsWriter(opts);
  return {
    lineStarted: (banner) => out(renderLineHeader(banner)),
    details(runId, line, records) {
      if (opts.requestDetails) files.details(records.map((r) => formatRequestDetail(runId, line, r)));
    },
    prompts: (lines) => files.prompts(lines),
    line(record) {
      const pct = record.shared_prefix_pct;
      for (const g of record.gates)
        if (!g.pass)
          log.warn(`gate failed at ${pct}%: ${g.expr} (value ${formatCell(g.value)}${g.repeats === undefined ? "" : `, the mean of ${g.repeats} repeats`})`);
      out(renderConsole(record));
      files.line(record);
    },
    repeated: (repeats) =>
      out(
        renderRepeats(
          repeats,
          opts.repeat ?? repeats.length,
          (opts.gates ?? []).map((g) => g.metric),
        ),
      ),
    progress: (total, label) => startProgress(total, label, { quiet: opts.quiet }),
    ended(records, ttftModel) {
      out(renderSweepEnd(records, ttftModel));
      if (!env.GITHUB_STEP_SUMMARY || records.length === 0) return;
      const run = reportRunOf(records, opts.outputFile ?? "this run", ttftModel);
      guardedWrite("GITHUB_STEP_SUMMARY", env.GITHUB_STEP_SUMMARY, () =>
        appendStepSummary(renderMarkdownReport([run], [], `warmbench run: ${run.pcts[0]!.model}`), env),
      );
    },
  };
}
