/**
 * Reading results files back: ours (one line per pct), 0.1's (with "run" and "summary" lines) and the script's own
 * (only its keys). Lines are grouped into runs by `run_id`; a run's TTFT model is refitted from its pct lines'
 * `ttft_fit` moments, so the file alone reproduces everything the console printed.
 */
import { UsageError } from "../errors.ts";
import { fitFromMoments, mergeTtftMoments, type TtftModel, type TtftMoments } from "../metrics/ttft-model.ts";
import type { StoredSweepLine } from "../metrics/sweep-line.ts";
import { parseJsonlLine } from "./jsonl.ts";
import { LINE_RULES, lineProblem } from "./line-check.ts";

/** The pct lines of one run, in file order, and its TTFT model. */
export interface RunLines {
  /** null for lines without a run_id (the script's files, 0.1's files). */
  runId: string | null;
  pcts: StoredSweepLine[];
  /** Refitted from the lines' moments, or 0.1's summary line; null when neither is there. */
  ttftModel: TtftModel | null;
  /** Whether the file says anything about a TTFT model for this run (the script's files do not). */
  hasTtftModel: boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Whether a parsed line is a pct line: ours and the script's have no `type`; 0.1's say "pct". */
function isSweepLine(obj: unknown): obj is StoredSweepLine {
  if (!isObject(obj)) return false;
  if ("type" in obj) return obj.type === "pct";
  return "shared_prefix_pct" in obj && "completed" in obj;
}

/** 0.1's summary line wrote its model in camelCase. */
function legacyModel(summary: Record<string, unknown>): TtftModel | null {
  const m = summary.ttft_model;
  if (!isObject(m) || typeof m.n !== "number") return null;
  return {
    n: m.n,
    fixed_ms: Number(m.fixedMs),
    prefill_us_per_token: Number(m.prefillUsPerToken),
    saved_us_per_cached_token: Number(m.savedUsPerCachedToken),
    r2: typeof m.r2 === "number" ? m.r2 : null,
  };
}

/** Whether a parsed line is a results line (ours of any kind, 0.1's pct lines, the script's): what the checks judge. */
function isResultsLine(obj: Record<string, unknown>): boolean {
  if ("type" in obj) return obj.type === "pct" || obj.type === "round" || obj.type === "capacity";
  return "shared_prefix_pct" in obj || "schema_version" in obj || "warmbench_version" in obj;
}

/**
 * THE reader of results files: every line parsed (Python's bare Infinity, -Infinity and NaN read as numbers), and
 * every results line checked (line-check.ts: the published schema for the current schema_version, the consistency
 * rules for any). A line that is not JSON, or breaks a rule, is a UsageError (exit 2) naming the file, the line, the
 * rule and the key. Returns the objects of the file in order (lines that are no object left out).
 */
export function readResultLines(text: string, name = "JSONL"): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    let obj: unknown;
    try {
      obj = parseJsonlLine(line);
    } catch {
      throw new UsageError(`${name} line ${i + 1} is not valid JSON`);
    }
    if (!isObject(obj)) continue;
    if (isResultsLine(obj)) {
      const problem = lineProblem(obj);
      if (problem !== null) throw new UsageError(`${name} line ${i + 1} is invalid (${LINE_RULES[problem.rule]}): ${problem.text}`);
    }
    out.push(obj);
  }
  return out;
}

/** Parses a results file's text into runs (its pct lines); a line that is not JSON or breaks a rule is a UsageError naming it. */
export function readResults(text: string, name = "JSONL"): RunLines[] {
  const runs: RunLines[] = [];
  let current: (RunLines & { moments: TtftMoments | null }) | null = null;
  for (const obj of readResultLines(text, name)) {
    if (obj.type === "run") {
      current = null; // 0.1: a run header starts a new run
      continue;
    }
    if (obj.type === "summary") {
      if (current) {
        current.ttftModel = legacyModel(obj);
        current.hasTtftModel = true;
      }
      current = null;
      continue;
    }
    if (!isSweepLine(obj)) continue;
    const runId = typeof obj.run_id === "string" ? obj.run_id : null;
    if (current === null || current.runId !== runId || (runId === null && obj.run !== undefined)) {
      current = { runId, pcts: [], ttftModel: null, hasTtftModel: false, moments: null };
      runs.push(current);
    }
    current.pcts.push(obj);
    if (isObject(obj.ttft_fit) || obj.ttft_fit === null) {
      current.moments = mergeTtftMoments(current.moments, (obj.ttft_fit as TtftMoments | null) ?? null);
      current.ttftModel = fitFromMoments(current.moments);
      current.hasTtftModel = true;
    }
  }
  return runs.map(({ runId, pcts, ttftModel, hasTtftModel }) => ({ runId, pcts, ttftModel, hasTtftModel }));
}
