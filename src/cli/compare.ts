/**
 * `warmbench compare BASE.jsonl NEW.jsonl [--max-regress ...] [--md FILE] [--force] [--allow-missing]`: pairs the
 * lines of two runs by their axes (sweep or multi-turn round lines), refuses pairs that measured different work
 * (exit 2, naming the field), prints the deltas and exits 7 when a metric regressed beyond its limit or a check fails:
 * a BASE line missing from NEW, more failed requests, a cache proof lost, a NEW line whose client saturated.
 */
import { existsSync } from "node:fs";
import { EXIT, UsageError } from "../errors.ts";
import { log } from "../log.ts";
import type { RawFlags } from "../config/flag-values.ts";
import { type ParsedFlags, write } from "./command.ts";
import { COMPARE_DEFAULTS } from "../config/defaults.ts";
import { checkOutputWritable } from "../output/jsonl-file.ts";
import { writeArtifact } from "../output/results-writer.ts";
import { appendStepSummary } from "../output/step-summary.ts";
import { outputFailures } from "../write-guard.ts";
import { capacityFailureFindings, missingFindings, pairFindings, sameRunFindings } from "../compare/evidence.ts";
import { judgePair } from "../compare/judge.ts";
import { judgeCostModel } from "../compare/cost-model.ts";
import { combineLimits, parseLimits, parseOnly } from "../compare/limits.ts";
import { metricsOf } from "../compare/metrics.ts";
import { field, lastRunLines, olderLinesNote, type CompareLine } from "../compare/lines.ts";
import { openHistory } from "../history/db.ts";
import { bootstrapRun, resolveBaseline, setStatus, storedRun, type StoredRun } from "../history/store.ts";
import { historyDbPath } from "./history-db.ts";
import { describeDifference, pairLines } from "../compare/pairing.ts";
import { noiseNote, pairRepeats, repeatsByLabel } from "../compare/repeats.ts";
import {
  boundedInterval,
  describeInconclusive,
  describeRegression,
  inconclusives,
  regressions,
  renderCompareConsole,
  renderCompareMarkdown,
  type Comparison,
} from "../compare/render.ts";

const HISTORY_PREFIX = "history:";

/**
 * BASE read from the history (--db): `history:last-green` (the newest accepted run of NEW's workload),
 * `history:TAG` or `history:RUN_ID`. `candidate`: NEW's run when the history holds it pending, whose status this
 * compare decides.
 */
function historyBaseline(
  raw: RawFlags,
  spec: string,
  next: CompareLine[],
): { lines: CompareLine[]; name: string; candidate: string | null; bootstrap: StoredRun | null } {
  if (spec === "") throw new UsageError("compare: history: expects last-green, a tag or a run id (e.g. history:last-green)");
  const path = historyDbPath(raw);
  // Opened for writing (a pending candidate's verdict is recorded, a 0.3 history migrated), but never created here.
  if (!existsSync(path)) throw new UsageError(`--db ${path}: no history yet (warmbench history add FILES creates it)`);
  const db = openHistory(path, true);
  try {
    const first = spec === "last-green" || spec === "last-accepted" ? bootstrapRun(db, next) : null;
    if (first !== null) return { lines: [], name: path, candidate: null, bootstrap: first };
    const { run, lines } = resolveBaseline(db, spec, next, path);
    const name = `history:${spec} (run ${run.run_id}, ${run.started_at}${run.tag ? `, tag ${run.tag}` : ""})`;
    log.info(`compare: BASE is ${name} from ${path}`);
    // A tag or a run id is the user's own choice of baseline; one never accepted is judged against, but said so.
    if (run.status !== "accepted")
      log.warn(`compare: BASE run ${run.run_id} is ${run.status} as a baseline (${run.status_reason}); history:last-green takes accepted runs only`);
    // Only a compare against the baseline of its time (last-green) decides whether a candidate becomes one.
    const newId = field(next[0]!, "run_id");
    const stored = typeof newId === "string" && (spec === "last-green" || spec === "last-accepted") ? storedRun(db, newId) : null;
    return { lines, name, candidate: stored !== null && stored.status === "pending" ? stored.run_id : null, bootstrap: null };
  } finally {
    db.close();
  }
}

/** A pending candidate's verdict into the history: accepted on exit 0, rejected on 7; still pending when inconclusive. */
function recordVerdict(raw: RawFlags, runId: string, code: number, baseName: string, why: string | undefined): void {
  const path = historyDbPath(raw);
  const db = openHistory(path, true);
  try {
    if (code === EXIT.ok) setStatus(db, runId, "accepted", `compared with ${baseName}: no regression`);
    else if (code === EXIT.regression) setStatus(db, runId, "rejected", `regressed against ${baseName}: ${why ?? "see compare"}`);
    else return;
    log.info(`compare: run ${runId} is now ${code === EXIT.ok ? "accepted" : "rejected"} as a baseline in ${path}`);
  } finally {
    db.close();
  }
}

export async function compareCommand(raw: ParsedFlags): Promise<number> {
  const [baseFile, newFile, ...extra] = raw._;
  if (baseFile === undefined || newFile === undefined || extra.length > 0) {
    throw new UsageError("compare: expects two JSONL results files (warmbench compare BASE.jsonl NEW.jsonl)");
  }
  // Limits add up: --max-regress adds to or overrides the defaults per metric; --only narrows to the metrics it names.
  const given = typeof raw["max-regress"] === "string" ? parseLimits(raw["max-regress"]) : null;
  const only = typeof raw.only === "string" ? parseOnly(raw.only) : null;
  const md = typeof raw.md === "string" ? raw.md : null;
  if (md !== null) checkOutputWritable(md, "--md");
  const allowMissing = raw["allow-missing"] === true;

  const nextLines = lastRunLines(newFile, "NEW");
  const {
    lines: baseLines,
    name: baseName,
    candidate: historyRun,
    bootstrap,
  } = baseFile.startsWith(HISTORY_PREFIX)
    ? historyBaseline(raw, baseFile.slice(HISTORY_PREFIX.length), nextLines)
    : { lines: lastRunLines(baseFile, "BASE"), name: baseFile, candidate: null, bootstrap: null };
  if (bootstrap !== null) return bootstrapped(bootstrap, baseName, newFile, md);
  for (const note of [olderLinesNote(baseLines, "BASE", baseName), olderLinesNote(nextLines, "NEW", newFile)]) if (note !== null) log.warn(note);
  const pairing = pairLines(baseLines, nextLines);
  if (pairing.pairs.length === 0) {
    throw new UsageError(`compare: no line is in both files (BASE ${pairing.onlyInBase.join(",")}; NEW ${pairing.onlyInNew.join(",")})`);
  }
  const mismatched = pairing.pairs.filter((p) => p.differences.length > 0);
  if (mismatched.length > 0 && raw.force !== true) {
    const more = mismatched.length > 1 ? ` (and ${mismatched.length - 1} more line(s))` : "";
    throw new UsageError(
      `compare: refused: ${describeDifference(mismatched[0]!)}${more}; the runs did not measure the same workload (--force compares anyway)`,
    );
  }
  for (const p of mismatched) log.warn(`compare --force: ${describeDifference(p)}`);
  // NEW's saturated lines fail as untrustworthy (evidence.ts); BASE's are a note: the baseline may flatter or hide.
  const baseSaturated = pairing.pairs.filter((p) => field(p.base, "client_saturated") === true).map((p) => p.label);

  const baseRepeats = repeatsByLabel(baseLines);
  const nextRepeats = repeatsByLabel(nextLines);
  // No p99 ITL default even with repeats (0.3 added one): a single run's p99 ITL moves by tens of percent, so its
  // interval straddles any useful limit, and an inconclusive verdict now fails (exit 8) instead of passing.
  const defaults = parseLimits(COMPARE_DEFAULTS.maxRegress);
  const limits = combineLimits(defaults, given, only);
  // A limit the user named on a metric neither file's lines have would judge nothing: refused (the evidence check's metric_absent).
  const named = new Set([...(given?.keys() ?? []), ...(only ?? [])]);
  const kinds = [...baseLines, ...nextLines];
  for (const name of named) {
    // A key the lines' kind may carry but these lines do not (loss_* without replicas, fidelity_* without the check).
    if (!kinds.some((l) => metricsOf(l).some((m) => m.name === name && m.value(l) !== undefined))) {
      throw new UsageError(
        `compare: ${name} is not a metric of these files' lines (${[...new Set(kinds.map((l) => ("type" in l && l.type === "capacity" ? "capacity" : "point")))].join(", ")} lines), so its limit would judge nothing`,
      );
    }
  }
  const judged = [...limits.keys()].map((name) => ({ name, named: named.has(name) }));
  const rows = [
    ...pairing.pairs.flatMap((p) => judgePair(p, limits, pairRepeats(p, baseRepeats, nextRepeats), only)),
    ...judgeCostModel(baseLines, nextLines, limits, only),
  ].map(boundedInterval);
  const withInterval = new Set(rows.filter((r) => r.ciPct != null).map((r) => r.label)).size;
  const comparison: Comparison = {
    baseFile: baseName,
    newFile,
    rows,
    forced: mismatched.map(describeDifference),
    onlyInBase: pairing.onlyInBase,
    onlyInNew: pairing.onlyInNew,
    allowMissing,
    saturated: baseSaturated.length > 0 ? [`BASE at ${baseSaturated.join(", ")}`] : [],
    noise: noiseNote(pairing.pairs.length, withInterval, rows),
    findings: [
      ...sameRunFindings(baseLines, nextLines),
      ...(allowMissing ? [] : missingFindings(pairing.onlyInBase)),
      ...pairing.pairs.flatMap(capacityFailureFindings),
      ...pairing.pairs.flatMap((p) =>
        pairFindings(
          p,
          judged.flatMap((j) => {
            const metric = metricsOf(p.base).find((m) => m.name === j.name);
            return metric === undefined ? [] : [{ metric, named: j.named }];
          }),
        ),
      ),
    ],
  };
  write(renderCompareConsole(comparison));
  const markdown = renderCompareMarkdown(comparison);
  const written = md === null || writeArtifact("--md", md, markdown);
  appendStepSummary(markdown);
  if (allowMissing && pairing.onlyInBase.length > 0) log.warn(`compare --allow-missing: not compared, missing from NEW: ${pairing.onlyInBase.join(", ")}`);
  const code = compareExit(comparison, raw["allow-inconclusive"] === true);
  const firstFailure = regressions(comparison).map(describeRegression)[0] ?? comparison.findings[0]?.text;
  if (historyRun !== null) recordVerdict(raw, historyRun, code, baseName, firstFailure);
  // A verdict that failed outranks the report of it; with none, an --md not written is exit 9.
  if (code === EXIT.ok && !written) {
    log.error(`${outputFailures().join("; ")}: exit code ${EXIT.outputFailed}`);
    return EXIT.outputFailed;
  }
  return code;
}

/**
 * The first run of a workload in a history: accepted when it was added (its own evidence and gates held), it is the
 * baseline, so there is nothing to judge it against: said on stdout (and in --md and the step summary), exit 0.
 */
function bootstrapped(run: StoredRun, dbPath: string, newFile: string, md: string | null): number {
  const text = `compare: NEW ${newFile} (run ${run.run_id}) is the first accepted run of its workload in ${dbPath}: it bootstraps the baseline (${run.status_reason}); nothing to compare it against yet, so no regression.`;
  write(`${text}\n`);
  const markdown = `## warmbench compare\n\n**${text}**\n`;
  const written = md === null || writeArtifact("--md", md, markdown);
  appendStepSummary(markdown);
  if (!written) {
    log.error(`${outputFailures().join("; ")}: exit code ${EXIT.outputFailed}`);
    return EXIT.outputFailed;
  }
  return EXIT.ok;
}

/** 7 on a regression or a failing check; else 8 when a verdict is inconclusive (unless accepted); else 0. */
function compareExit(comparison: Comparison, allowInconclusive: boolean): number {
  const failing = [...regressions(comparison).map(describeRegression), ...comparison.findings.map((f) => f.text)];
  if (failing.length > 0) {
    const shown = failing.slice(0, 10).map((text) => `  ${text}`);
    if (failing.length > shown.length) shown.push(`  ... and ${failing.length - shown.length} more (see the table)`);
    log.error(`${failing.length} regression(s) or failing check(s): exit code ${EXIT.regression}\n${shown.join("\n")}`);
    return EXIT.regression;
  }
  const unsure = inconclusives(comparison);
  if (unsure.length === 0) return EXIT.ok;
  if (allowInconclusive) {
    log.warn(`compare --allow-inconclusive: ${unsure.length} inconclusive verdict(s) accepted: ${unsure.map(describeInconclusive).join("; ")}`);
    return EXIT.ok;
  }
  log.error(
    `${unsure.length} inconclusive verdict(s) (the 95 % interval straddles the limit; more repeats decide, --allow-inconclusive accepts): exit code ${EXIT.inconclusive}\n${unsure.map((r) => `  ${describeInconclusive(r)}`).join("\n")}`,
  );
  return EXIT.inconclusive;
}
