/**
 * `warmbench compare BASE.jsonl NEW.jsonl [--max-regress ...] [--md FILE] [--force]`: pairs the pct lines of two
 * runs by workload, refuses pairs that measured different work (exit 2, naming the field), prints the deltas and
 * exits 7 when a metric regressed beyond its limit.
 */
import { writeFileSync } from "node:fs";
import { EXIT, UsageError } from "../errors.ts";
import { log } from "../log.ts";
import { type RawFlags } from "./options.ts";
import { COMPARE_DEFAULTS } from "../config/options.ts";
import { checkOutputWritable } from "../output/jsonl-file.ts";
import { readResults } from "../report/results-file.ts";
import { readResultsText } from "../report/runs.ts";
import { appendStepSummary } from "../output/step-summary.ts";
import type { PctLine } from "../metrics/pct-record.ts";
import { judgePair } from "../compare/judge.ts";
import { parseLimits } from "../compare/limits.ts";
import { describeDifference, pairLines } from "../compare/pairing.ts";
import { describeRegression, regressions, renderCompareConsole, renderCompareMarkdown, type Comparison } from "../compare/render.ts";

/** The pct lines of a file's last run (a file may hold several: a warning says which one is compared). */
function lastRunLines(file: string, side: string): PctLine[] {
  const runs = readResults(readResultsText(file, "compare"), file);
  const last = runs.at(-1);
  if (last === undefined) throw new UsageError(`compare: ${side} ${file} holds no pct line`);
  if (runs.length > 1) log.warn(`compare: ${file} holds ${runs.length} runs; comparing its last (run_id ${last.runId ?? "none"})`);
  return last.pcts;
}

export function compareCommand(raw: RawFlags & { _: string[] }, write: (text: string) => void): number {
  const [baseFile, newFile, ...extra] = raw._;
  if (baseFile === undefined || newFile === undefined || extra.length > 0) {
    throw new UsageError("compare: expects two JSONL results files (warmbench compare BASE.jsonl NEW.jsonl)");
  }
  const limitsText = typeof raw["max-regress"] === "string" ? raw["max-regress"] : COMPARE_DEFAULTS.maxRegress;
  const limits = parseLimits(limitsText);
  const md = typeof raw.md === "string" ? raw.md : null;
  if (md !== null) checkOutputWritable(md, "--md");

  const pairing = pairLines(lastRunLines(baseFile, "BASE"), lastRunLines(newFile, "NEW"));
  if (pairing.pairs.length === 0) {
    throw new UsageError(`compare: no shared-prefix pct is in both files (BASE ${pairing.onlyInBase.join(",")}; NEW ${pairing.onlyInNew.join(",")})`);
  }
  const mismatched = pairing.pairs.filter((p) => p.differences.length > 0);
  if (mismatched.length > 0 && raw.force !== true) {
    const more = mismatched.length > 1 ? ` (and ${mismatched.length - 1} more pct(s))` : "";
    throw new UsageError(`compare: refused: ${describeDifference(mismatched[0]!)}${more}; the runs did not measure the same workload (--force compares anyway)`);
  }
  for (const p of mismatched) log.warn(`compare --force: ${describeDifference(p)}`);
  const saturated: string[] = [];
  for (const [side, key] of [["BASE", "base"], ["NEW", "next"]] as const) {
    const pcts = pairing.pairs.filter((p) => p[key].client_saturated === true).map((p) => p.label);
    if (pcts.length > 0) saturated.push(`${side} at ${pcts.join(", ")}`);
  }

  const comparison: Comparison = {
    baseFile,
    newFile,
    rows: pairing.pairs.flatMap((p) => judgePair(p, limits)),
    forced: mismatched.map(describeDifference),
    onlyInBase: pairing.onlyInBase,
    onlyInNew: pairing.onlyInNew,
    saturated,
  };
  write(renderCompareConsole(comparison));
  const markdown = renderCompareMarkdown(comparison);
  if (md !== null) writeFileSync(md, markdown);
  appendStepSummary(markdown);
  const regressed = regressions(comparison);
  if (regressed.length === 0) return EXIT.ok;
  const shown = regressed.slice(0, 10).map((r) => `  ${describeRegression(r)}`);
  if (regressed.length > shown.length) shown.push(`  ... and ${regressed.length - shown.length} more (see the table)`);
  log.error(`${regressed.length} regression(s) beyond the limits: exit code ${EXIT.regression}\n${shown.join("\n")}`);
  return EXIT.regression;
}
