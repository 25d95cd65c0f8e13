/** What every scenario returns: a table for the Markdown, pass/fail rows against the targets, and raw trials. */
import type { TrialResult } from "./trial.ts";

/** One row of the targets table; `pass` is null when the run could not decide it (e.g. --quick sizes). */
export interface TargetCheck {
  target: string;
  measured: string;
  pass: boolean | null;
}

/** The outcome of one scenario. */
export interface ScenarioResult {
  name: string;
  title: string;
  /** Column headers and rows of the Markdown table. */
  columns: string[];
  rows: string[][];
  targets: TargetCheck[];
  notes: string[];
  trials: TrialResult[];
  /** More tables for the Markdown, after every scenario's own. */
  extraTables?: Array<{ title: string; columns: string[]; rows: string[][] }>;
  /** Scenario-specific figures other scenarios or the summary need. */
  figures: Record<string, number | string | null>;
  /** Raw measurements written to the scenario's JSON as they are (scenarios without trials). */
  details?: Record<string, unknown>;
  elapsedS: number;
}

/** Log a progress line to stderr (stdout stays clean for the final summary). */
export const progress = (msg: string): void => {
  process.stderr.write(`[bench] ${msg}\n`);
};
