/** The reference script's metric cases (test/fixtures/metrics/reference, made by make_reference_fixtures.py). */
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** One recorded request of a case, as the generator wrote it. */
export interface FixtureRecord {
  ok: boolean;
  promptLen: number;
  ttftMs: number;
  latencyMs: number;
  outputLen: number;
  itlMs: number[];
  generatedText: string;
}

export interface FixtureCase {
  name: string;
  durationS: number;
  context: {
    backend: string;
    max_concurrency: number;
    total_tokens: number;
    num_prompts: number;
    output_len: number;
    pct: number;
    prefix_len: number;
    suffix_len: number;
  };
  records: FixtureRecord[];
  /** What the script did: the line it appended and what it printed, or the exception it raised. */
  script: { error: string | null; jsonl: string | null; console: string | null };
}

const FIXTURE = join(import.meta.dir, "../fixtures/metrics/reference/script_metrics_cases.json");

export const scriptMetricCases = JSON.parse(readFileSync(FIXTURE, "utf8")) as { cases: FixtureCase[]; numpy_version: string };
