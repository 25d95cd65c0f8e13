/**
 * `warmbench report FILES... [--html OUT.html] [--md OUT.md] [--history [--db PATH] [--tag T]]`. Without --html/--md
 * it prints the console report of each file exactly as its runs printed it; with them it writes one report of every
 * run of every file, and with --history the trend of the history database's runs first (FILES optional then).
 */
import { EXIT, UsageError } from "../errors.ts";
import { log } from "../log.ts";
import type { RawFlags } from "../config/flag-values.ts";
import { type ParsedFlags, write } from "./command.ts";
import { readPointRuns } from "../report/point-runs.ts";
import { renderConsoleReport } from "../report/console-report.ts";
import { checkOutputWritable } from "../output/jsonl-file.ts";
import { writeArtifact } from "../output/results-writer.ts";
import { outputFailures } from "../write-guard.ts";
import { renderMarkdownReport } from "../report/markdown.ts";
import { loadReportRuns, readResultsText } from "../report/runs.ts";
import { checkHistoryFlags, loadHistoryTrend } from "./report-history.ts";

const flagValue = (raw: RawFlags, flag: string): string | null => (typeof raw[flag] === "string" ? (raw[flag] as string) : null);

export async function reportCommand(raw: ParsedFlags): Promise<number> {
  const files = raw._;
  const html = flagValue(raw, "html");
  const md = flagValue(raw, "md");
  const history = checkHistoryFlags(raw, html !== null || md !== null);
  if (files.length === 0 && !history) throw new UsageError("report: expects a JSONL results file (warmbench report FILE...), or --history");
  if (html === null && md === null) {
    for (const file of files) {
      const text = readResultsText(file, "report");
      // The same refusal as --html's: a file with no results line (empty, foreign, a JSON array) is exit 2, not a blank report.
      if (readPointRuns(text, file).length === 0) throw new UsageError(`report: ${file} holds no results line (neither a pct line nor a round line)`);
      // One file prints exactly what its run printed; several are told apart as `tail` does.
      write((files.length > 1 ? `==> ${file} <==\n` : "") + renderConsoleReport(text, file));
    }
    return EXIT.ok;
  }
  if (html !== null) checkOutputWritable(html, "--html");
  if (md !== null && md !== "-") checkOutputWritable(md, "--md");
  const { runs, differing } = files.length === 0 ? { runs: [], differing: [] } : loadReportRuns(files);
  const trend = history ? loadHistoryTrend(raw, runs) : null;
  let written = true;
  if (md !== null) {
    const markdown = renderMarkdownReport(runs, differing, undefined, trend);
    if (md === "-") write(markdown);
    else written = writeArtifact("--md", md, markdown);
  }
  if (html !== null) {
    // Loaded only here: the chart library is ~200 KB of text that no run needs.
    const { renderHtmlReport } = await import("../report/html/page.ts");
    written = writeArtifact("--html", html, renderHtmlReport(runs, differing, new Date(), trend)) && written;
  }
  if (!written) {
    log.error(`${outputFailures().join("; ")}: exit code ${EXIT.outputFailed}`);
    return EXIT.outputFailed;
  }
  log.info(
    `report: ${runs.length} run(s) from ${files.length} file(s)${trend ? `, ${trend.runs.length} in the history trend` : ""} -> ${[html, md].filter((p) => p !== null).join(", ")}`,
  );
  return EXIT.ok;
}
