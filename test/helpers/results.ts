/**
 * Reads a warmbench JSONL file in tests: every line, or only the per-pct lines. Every results line read (a sweep or
 * round line) is validated against the published JSON Schema, so each test that reads results checks the format.
 */
import { existsSync, readFileSync } from "node:fs";
import { expectSchemaValid } from "./schema.ts";

/**
 * Every JSONL line as an object ([] when the file does not exist). JSON has no non-finite numbers; the file
 * holds Python's bare Infinity / -Infinity / NaN (request_rate, stats of a pct without successes), which
 * become the strings "Infinity", "-Infinity", "NaN" here (as the schema says a reader maps them).
 * `validate: false` is for files written before the schema (older versions' fixtures).
 */
export function readJsonl(path: string, opts: { validate?: boolean } = {}): any[] {
  if (!existsSync(path)) return [];
  const text = readFileSync(path, "utf8");
  // Every line must be whole: a torn write would show up here as a JSON parse error.
  expectWholeLines(text, path);
  return text
    .split("\n")
    .filter((l) => l !== "")
    .map((l, i) => {
      const line = JSON.parse(l.replace(BARE_NON_FINITE, '"$1"'));
      if (opts.validate !== false && isResultsLine(line)) expectSchemaValid(line, `${path} line ${i + 1}`);
      return line;
    });
}

/**
 * A results line (sweep or round) rather than a per-request line of --request-details, --dump-prompts or the mock's
 * truth file, which share some key names but have none of these.
 */
const isResultsLine = (l: Record<string, unknown>): boolean => "warmbench_version" in l || "shared_prefix_pct" in l || "run_id" in l || l.type === "round";

/** The pct lines, in file order; a results file holds nothing else (as the script's), which this checks. */
export function readSweepLines(path: string): any[] {
  const lines = readJsonl(path);
  for (const l of lines)
    if (typeof l.shared_prefix_pct !== "number" || "type" in l) throw new Error(`${path}: not a pct line: ${JSON.stringify(l).slice(0, 200)}`);
  return lines;
}

// A bare token right after ": ", "[" or ", " and before a delimiter: a value, not text inside a string.
const BARE_NON_FINITE = /(?<=(?:: |\[|, ))(-?Infinity|NaN)(?=[,}\]])/g;

function expectWholeLines(text: string, path: string): void {
  if (text !== "" && !text.endsWith("\n")) throw new Error(`${path}: the last line is not terminated (torn write?)`);
}
