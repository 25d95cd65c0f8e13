/** Renders scenario results as Markdown: the run summary `bun run bench` prints, and the tables of docs/performance.md. */
import type { ScenarioResult, TargetCheck } from "./scenario.ts";

/** A Markdown table; pipes inside cells are escaped. */
export function renderTable(columns: readonly string[], rows: readonly (readonly string[])[]): string {
  const cell = (s: string) => s.replaceAll("|", "\\|").replaceAll("\n", " ");
  const lines = [`| ${columns.map(cell).join(" | ")} |`, `|${columns.map(() => "---").join("|")}|`];
  for (const r of rows) lines.push(`| ${r.map(cell).join(" | ")} |`);
  return lines.join("\n");
}

const verdict = (t: TargetCheck): string => (t.pass === null ? "n/a" : t.pass ? "PASS" : "FAIL");

/** What the report header says about the run. */
export interface RunInfo {
  quick: boolean;
  startedAt: string;
  elapsedS: number;
  machine: string;
  warmbenchVersion: string;
  python: string;
  extraTables: Array<{ title: string; columns: string[]; rows: string[][] }>;
}

/** A whole run's Markdown (printed on stdout): header, targets table, then one section per scenario. */
export function renderMarkdown(results: readonly ScenarioResult[], info: RunInfo): string {
  const out: string[] = [];
  out.push(`# warmbench performance harness${info.quick ? " (--quick smoke run: tiny sizes, targets not judged)" : ""}`);
  out.push("");
  out.push(`Started ${info.startedAt}, took ${info.elapsedS.toFixed(0)} s. Machine: ${info.machine}.`);
  out.push(`warmbench ${info.warmbenchVersion}. Python reference: ${info.python}.`);
  out.push("");
  out.push(
    "**Mock and client share this machine's cores**: every figure is a ratio measured in one run on the same box, " +
      "and rates are lower bounds on what either side does alone. The full run is kept under ~10 minutes.",
  );
  out.push("");
  out.push("## Targets");
  out.push("");
  const targets = results.flatMap((r) => r.targets);
  out.push(
    renderTable(
      ["target", "measured", "result"],
      targets.map((t) => [t.target, t.measured, verdict(t)]),
    ),
  );
  for (const r of results) {
    out.push("");
    out.push(`## ${r.title}`);
    out.push("");
    out.push(renderTable(r.columns, r.rows));
    out.push("");
    for (const n of r.notes) out.push(`- ${n}`);
    out.push(`- Scenario time: ${r.elapsedS.toFixed(0)} s.`);
  }
  for (const t of info.extraTables) {
    out.push("");
    out.push(`## ${t.title}`);
    out.push("");
    out.push(renderTable(t.columns, t.rows));
  }
  out.push("");
  return out.join("\n");
}
