/**
 * The report as Markdown (CI logs, GitHub step summaries): the HTML report's tables, gate results and run
 * metadata, without the charts. Cells are escaped so a value from the JSONL cannot break the table or inject markup.
 */
import type { ReportRun } from "./runs.ts";
import { historySections, type HistoryTrend } from "./history-trend.ts";
import { buildSections } from "./sections.ts";
import { searchVerdict } from "./capacity-sections.ts";
import { numericColumns } from "./text-table.ts";
import { differencesTable, gatesTable, metadataTable, type ReportTable } from "./tables.ts";
import { escapeControls } from "../terminal-text.ts";

/**
 * A cell's text made inert: table pipes, line breaks, HTML tags (GitHub renders some HTML), and control characters
 * (a server version's ESC or BEL, a history tag's: shown as `\xNN`, as on the console, never raw in the file).
 */
export function escapeMarkdownCell(text: string): string {
  return escapeControls(text.replace(/[\\|`*_[\]<>&]/g, (c) => `\\${c}`).replace(/\r?\n/g, " "));
}

export function renderMarkdownTable(t: Pick<ReportTable, "columns" | "rows">): string {
  const line = (cells: readonly string[]) => `| ${cells.map(escapeMarkdownCell).join(" | ")} |`;
  const numeric = numericColumns(t.columns, t.rows);
  return [line(t.columns), `|${numeric.map((n) => (n ? "---:" : "---")).join("|")}|`, ...t.rows.map(line)].join("\n");
}

/** The whole Markdown report of some runs. */
export function renderMarkdownReport(
  runs: readonly ReportRun[],
  differing: readonly string[],
  title = "warmbench report",
  trend: HistoryTrend | null = null,
): string {
  const out: string[] = [`## ${escapeMarkdownCell(title)}`, ""];
  const gates = gatesTable(runs);
  const failed = gates.rows.filter((r) => r[4] === "FAIL").length;
  const search = searchVerdict(runs);
  if (search !== null) out.push(search.pass ? search.text : `**${search.text}**`, "");
  if (gates.rows.length > 0) {
    out.push(failed === 0 ? `All ${gates.rows.length} gate verdicts pass.` : `**${failed} of ${gates.rows.length} gate verdicts FAIL.**`, "");
    out.push(`### ${gates.title}`, "", renderMarkdownTable(gates), "");
  }
  for (const s of [...historySections(trend), ...buildSections(runs)]) {
    out.push(`### ${s.title}`, "", renderMarkdownTable(s.table), "");
  }
  // A history trend alone (report --history without FILES) has no run of its own to list.
  if (runs.length > 0) out.push(`### Runs`, "", renderMarkdownTable(metadataTable(runs)), "");
  if (differing.length > 0) {
    const diff = differencesTable(runs, differing);
    out.push(`### ${diff.title}`, "", renderMarkdownTable(diff), "");
  }
  // Titles are written as they are; whatever a title holds, no control character reaches the file raw.
  return escapeControls(out.join("\n"));
}
