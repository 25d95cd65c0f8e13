/**
 * The HTML report: one self-contained, offline file (Chart.js, the page script and the styles inlined; a Content
 * Security Policy lets only those two scripts run and nothing load). Every text from the JSONL is escaped here, and
 * the chart data travels as JSON in a non-executed script element, so a model named `<img src=x onerror=...>`
 * shows as text.
 */
// The package's export map hides its prebuilt UMD bundle, so it is reached by path.
import chartJsFile from "../../../node_modules/chart.js/dist/chart.umd.min.js" with { type: "text" };
import pageScript from "./page.client.js" with { type: "text" };
import pageCss from "./page.css" with { type: "text" };
import { VERSION } from "../../version.ts";
import type { ReportRun } from "../runs.ts";
import { historySections, type HistoryTrend } from "../history-trend.ts";
import { buildSections } from "../sections.ts";
import type { ChartData, ReportSection } from "../chart-data.ts";
import { differencesTable, gatesTable, metadataTable, type ReportTable } from "../tables.ts";
import { searchVerdict } from "../capacity-sections.ts";
import { numericColumns } from "../text-table.ts";
import { escapeHtml, jsonForScript, sha256Base64 } from "./escape.ts";
import { agenticPictures, type LaneChart } from "../agentic-sections.ts";
import { agenticRuns } from "../agentic-runs.ts";

/** The library without its source-map comment: the map is not shipped, and nothing may be fetched. */
const chartJs = chartJsFile.replace(/\n\/\/# sourceMappingURL=\S*\s*$/, "\n");

/** Series colours (Tableau 10): run i gets PALETTE[i % 10], in the charts and in the page's legend. */
const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];

function renderTable(t: Pick<ReportTable, "id" | "columns" | "rows">, caption = ""): string {
  const numericColumn = numericColumns(t.columns, t.rows);
  // A key name as a column title may break after its underscores, never inside a word.
  const head = t.columns.map((c, i) => `<th${numericColumn[i] ? ' class="num"' : ""}>${escapeHtml(c).replace(/_/g, "_<wbr>")}</th>`).join("");
  const body = t.rows
    .map((r) => {
      const cells = r.map((cell, i) => {
        const cls = [numericColumn[i] ? "num" : "", cell === "FAIL" || cell === "pass" ? cell : ""].filter(Boolean).join(" ");
        return `<td${cls ? ` class="${cls}"` : ""}>${escapeHtml(cell)}</td>`;
      });
      return `<tr>${cells.join("")}</tr>`;
    })
    .join("\n");
  return `<div class="tablewrap"><table id="table-${escapeHtml(t.id)}">${caption}<thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table></div>`;
}

function renderSelect(chart: ChartData): string {
  if (chart.byLine) {
    const options = chart.byLine.labels
      .map((l, i) => `<option value="${i}"${i === chart.byLine!.selected ? " selected" : ""}>${escapeHtml(l)}</option>`)
      .join("");
    return `<div class="controls"><label>line <select id="select-${chart.id}">${options}</select></label></div>`;
  }
  if (!chart.byPct) return "";
  const options = chart.byPct.pcts.map((p) => `<option value="${p}"${p === chart.byPct!.selected ? " selected" : ""}>${p}%</option>`).join("");
  return `<div class="controls"><label>shared prefix <select id="select-${chart.id}">${options}</select></label></div>`;
}

function renderSection(s: ReportSection): string {
  return `<article class="card" id="section-${s.id}">
<h2>${escapeHtml(s.title)}</h2>
<p class="note">${escapeHtml(s.note)}</p>
${renderSelect(s.chart)}<div class="chart"><canvas id="chart-${s.id}" role="img" aria-label="${escapeHtml(s.title)}"></canvas></div>
${renderTable(s.table)}
</article>`;
}

/** A swim lane's card: the page script sizes its canvas to its rows and draws every bar. */
function renderLanes(l: LaneChart): string {
  const subagents = l.rows.some((r) => r[1] > 1);
  return `<article class="card wide lanes" id="section-${l.id}">
<h2>${escapeHtml(l.title)}</h2>
<p class="note">One row per session, each request a bar from its send to its last byte${subagents ? "; subagents on the sub-rows under their session's root agent, side by side when they ran at once" : ""}. Colour: the request's cache hit ratio (cached / prompt tokens); grey: none reported.</p>
<p class="lanekey"><span>0</span><span class="ramp"></span><span>1</span><span class="swatch none"></span><span>no hit reported</span></p>
<div class="lanechart"><canvas id="lanes-${l.id}" role="img" aria-label="${escapeHtml(l.title)}"></canvas></div>
</article>`;
}

function renderVerdict(runs: readonly ReportRun[], gates: ReportTable): string {
  const search = searchVerdict(runs);
  const found = search === null ? "" : `<p class="verdict ${search.pass ? "pass" : "fail"}">${escapeHtml(search.text)}</p>`;
  if (gates.rows.length === 0) return found;
  const failed = gates.rows.filter((r) => r[4] === "FAIL").length;
  return (
    found +
    (failed === 0
      ? `<p class="verdict pass">All ${gates.rows.length} gate verdicts pass.</p>`
      : `<p class="verdict fail">${failed} of ${gates.rows.length} gate verdicts FAIL.</p>`)
  );
}

function renderHeaders(runs: readonly ReportRun[]): string {
  return runs
    .map(
      (r) => `<details><summary>${escapeHtml(r.label)}: full run header</summary><pre>${escapeHtml(JSON.stringify(r.header ?? null, null, 2))}</pre></details>`,
    )
    .join("\n");
}

/** The gates and the runs' metadata: absent from a page of a history trend alone (report --history without FILES). */
function runSections(runs: readonly ReportRun[], differing: readonly string[], gates: ReportTable, diff: ReportTable): string {
  return `<article class="card wide" id="section-gates">
<h2>Gates</h2>
${gates.rows.length ? renderTable(gates) : '<p class="note">No run had --gate set.</p>'}
</article>
<article class="card wide" id="section-runs">
<h2>Runs</h2>
${renderTable(metadataTable(runs))}
${differing.length ? `<h3>${escapeHtml(diff.title)}</h3>\n${renderTable(diff)}` : ""}
${renderHeaders(runs)}
</article>`;
}

/** The whole page; with a history trend (report --history), its charts come first. */
export function renderHtmlReport(
  runs: readonly ReportRun[],
  differing: readonly string[],
  generatedAt = new Date(),
  trend: HistoryTrend | null = null,
): string {
  const agentic = agenticPictures(agenticRuns(runs));
  const sections = [...historySections(trend), ...agentic.sections, ...buildSections(runs)];
  const gates = gatesTable(runs);
  const files = new Set(runs.map((r) => r.file)).size;
  const data = { palette: PALETTE, charts: sections.map((s) => s.chart), lanes: agentic.lanes };
  const csp = [
    "default-src 'none'",
    `script-src '${sha256Base64(chartJs)}' '${sha256Base64(pageScript)}'`,
    "style-src 'unsafe-inline'",
    "img-src data:",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
  const legend = runs.map((r, i) => `<li><span class="swatch" style="background:${PALETTE[i % PALETTE.length]}"></span>${escapeHtml(r.label)}</li>`).join("");
  const diff = differencesTable(runs, differing);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>warmbench report: ${runs.length} run${runs.length === 1 ? "" : "s"}</title>
<style>
${pageCss}
</style>
</head>
<body>
<header>
<h1>warmbench report</h1>
<p class="sub">${runs.length} run${runs.length === 1 ? "" : "s"} from ${files} file${files === 1 ? "" : "s"}${trend ? `, ${trend.runs.length} in the history trend` : ""}; generated ${escapeHtml(generatedAt.toISOString())} by warmbench ${escapeHtml(VERSION)}.${differing.length ? " Runs are named by the settings that differ between them." : ""}</p>
<ul class="series" id="series">${legend}</ul>
${renderVerdict(runs, gates)}
</header>
<main>
${agentic.lanes.map(renderLanes).join("\n")}
${sections.map(renderSection).join("\n")}
${runs.length === 0 ? "" : runSections(runs, differing, gates, diff)}
</main>
<footer>Charts drawn with Chart.js (MIT License), inlined: this file needs no network.</footer>
<script type="application/json" id="report-data">${jsonForScript(data)}</script>
<script>${chartJs}</script>
<script>${pageScript}</script>
</body>
</html>
`;
}
