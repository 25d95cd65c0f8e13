/**
 * The comparison as a console table and as Markdown: base, new, Δ, Δ%, the better side and the verdict per metric and
 * line, then the failing checks (evidence.ts) and the verdict.
 */
import { escapeMarkdownCell, renderMarkdownTable } from "../report/markdown.ts";
import { formatCell, renderTextTable } from "../report/text-table.ts";
import type { Finding } from "./evidence.ts";
import type { DeltaRow } from "./judge.ts";

export interface Comparison {
  baseFile: string;
  newFile: string;
  rows: DeltaRow[];
  /** One line per pair compared despite different workloads (--force). */
  forced: string[];
  onlyInBase: string[];
  onlyInNew: string[];
  /** --allow-missing: lines of BASE missing from NEW are accepted (and said so) instead of failing. */
  allowMissing: boolean;
  /** "BASE at 0%, 90%": sides whose client was saturated (their numbers may be the client's own delay). */
  saturated: string[];
  /** Checks that fail the comparison besides the limits: missing lines, more failures, lost proofs, untrustworthy lines. */
  findings: Finding[];
  /** What the verdicts know of the noise (repeats.ts noiseNote); absent: not said. */
  noise?: string;
}

const COLUMNS = ["line", "metric", "from", "base", "new", "Δ", "Δ%", "better", "limit", "verdict"];

const signed = (v: number | null, digits = 2): string => (v === null ? "n/a" : `${v > 0 ? "+" : ""}${formatCell(v, digits)}`);
/** The columns; the first is "pct" when every line is a sweep line (as the script names them). */
const columns = (c: Comparison): string[] => [c.rows.every((r) => r.pct !== null) ? "pct" : "line", ...COLUMNS.slice(1)];

/** A percent change, always with one decimal: "+20.0%". */
const signedPct = (v: number): string => `${v > 0 ? "+" : ""}${Number.isFinite(v) ? v.toFixed(1) : formatCell(v)}%`;

/** With repeats, a "95% CI" column of Δ% after Δ% (and "n" repeats a side); without, the table as before. */
const hasIntervals = (c: Comparison): boolean => c.rows.some((r) => r.repeats !== undefined);

function cells(r: DeltaRow, intervals: boolean): string[] {
  const out = [
    `${r.label}${r.forced ? "*" : ""}`,
    r.metric,
    r.source,
    formatCell(r.base),
    formatCell(r.next),
    signed(r.delta),
    r.deltaPct === null ? "n/a" : signedPct(r.deltaPct),
    r.betterSide ?? "n/a",
    r.limitPct === null ? "-" : `${r.limitPct}%`,
    r.verdict,
  ];
  if (intervals) {
    const ci = r.ciPct ? `${signedPct(r.ciPct[0])}..${signedPct(r.ciPct[1])}` : "-";
    out.splice(7, 0, ci, r.repeats ? `${r.repeats[0]}/${r.repeats[1]}` : "1/1");
  }
  return out;
}

function tableOf(c: Comparison): { columns: string[]; rows: string[][] } {
  const intervals = hasIntervals(c);
  const cols = columns(c);
  if (intervals) cols.splice(7, 0, "95% CI", "n");
  return { columns: cols, rows: c.rows.map((r) => cells(r, intervals)) };
}

/**
 * A metric of a line is a quantity that cannot be negative (a latency, a rate, a count), so it cannot fall by more
 * than 100 %: a symmetric interval's low end past that ("-186.7 %..+80.9 %") is cut at -100 %. The TTFT model's
 * terms are fitted, and a fitted overhead may be negative: left as they are.
 */
export function boundedInterval(row: DeltaRow): DeltaRow {
  if (row.ciPct == null || row.ciPct[0] >= -100 || row.metric.startsWith("ttft_model_")) return row;
  return { ...row, ciPct: [-100, Math.max(-100, row.ciPct[1])] };
}

export const inconclusives = (c: Comparison): DeltaRow[] => c.rows.filter((r) => r.verdict === "inconclusive");

/** "p99_ttft_ms at 50%: +4.0% (95% CI -1.0%..+9.0%, limit 5%)". */
export const describeInconclusive = (r: DeltaRow): string =>
  `${r.metric} at ${r.label}: ${r.deltaPct === null ? "n/a" : signedPct(r.deltaPct)} (95% CI ${r.ciPct ? r.ciPct.map(signedPct).join("..") : "n/a"} straddles the limit ${r.limitPct}%)`;

export const regressions = (c: Comparison): DeltaRow[] => c.rows.filter((r) => r.verdict === "REGRESSED");

/** "mean_itl_ms at 50%: +20.3% (limit 5%)". */
export const describeRegression = (r: DeltaRow): string =>
  `${r.metric} at ${r.label}: ${r.deltaPct === null ? "worse from 0" : signedPct(r.deltaPct)} (limit ${r.limitPct}%)`;

function verdictLine(c: Comparison): string {
  const regressed = regressions(c);
  if (regressed.length === 0 && c.findings.length === 0) return `No regression beyond the limits (${new Set(c.rows.map((r) => r.label)).size} lines compared).`;
  const parts: string[] = [];
  if (regressed.length > 0) parts.push(`${regressed.length} regression(s) beyond the limits: ${regressed.map(describeRegression).join("; ")}`);
  if (c.findings.length > 0) parts.push(`${c.findings.length} failing check(s): ${c.findings.map((f) => f.text).join("; ")}`);
  return parts.join(". ");
}

function notes(c: Comparison): string[] {
  const out: string[] = [];
  if (c.forced.length > 0) out.push(`* compared with --force although the workloads differ: ${c.forced.join("; ")}`);
  if (c.saturated.length > 0) out.push(`client saturated, so those numbers may be the client's own delay: ${c.saturated.join("; ")}`);
  if (c.onlyInBase.length > 0) {
    out.push(`lines only in BASE (not compared): ${c.onlyInBase.join(", ")}${c.allowMissing ? " (missing from NEW, accepted by --allow-missing)" : ""}`);
  }
  if (c.onlyInNew.length > 0) out.push(`lines only in NEW (not compared): ${c.onlyInNew.join(", ")}`);
  if (c.noise !== undefined) out.push(c.noise);
  const unsure = inconclusives(c);
  if (unsure.length > 0)
    out.push(`${unsure.length} inconclusive (more repeats would decide; exit 8 unless --allow-inconclusive): ${unsure.map(describeInconclusive).join("; ")}`);
  return out;
}

export function renderCompareConsole(c: Comparison): string {
  const head = `compare: BASE ${c.baseFile}  NEW ${c.newFile}  (Δ = new - base; latency: lower is better, throughput: higher)`;
  const t = tableOf(c);
  const align: ("left" | "right")[] = ["right", "left", "left", "right", "right", "right", "right", "left", "right", "left"];
  if (hasIntervals(c)) align.splice(7, 0, "right", "right");
  const table = renderTextTable(t.columns, t.rows, align);
  return [head, "", table, "", ...notes(c), verdictLine(c)].join("\n") + "\n";
}

export function renderCompareMarkdown(c: Comparison): string {
  const out = [`## warmbench compare`, "", `BASE \`${escapeMarkdownCell(c.baseFile)}\`, NEW \`${escapeMarkdownCell(c.newFile)}\``, ""];
  const regressed = regressions(c);
  out.push(regressed.length === 0 ? `**${escapeMarkdownCell(verdictLine(c))}**` : `**${escapeMarkdownCell(verdictLine(c))}**`, "");
  for (const n of notes(c)) out.push(`- ${escapeMarkdownCell(n)}`);
  if (notes(c).length) out.push("");
  out.push(renderMarkdownTable(tableOf(c)), "");
  return out.join("\n");
}
