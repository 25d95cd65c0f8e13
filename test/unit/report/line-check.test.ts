/**
 * The reader's rules (report/line-check.ts through readResultLines): a line of the current schema is held to the
 * published JSON Schema, every line to the consistency rules, and an older line only to what it holds.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { formatJsonl, parseJsonlLine } from "../../../src/report/jsonl.ts";
import { readResultLines, readResults } from "../../../src/report/results-file.ts";

const FIXTURES = join(import.meta.dir, "../../fixtures/results");
/** A 0.2 sweep line (no evidence block, no schema_version): judged on the keys it holds. */
const old = (): Record<string, any> => parseJsonlLine(readFileSync(join(FIXTURES, "v0.2-sweep.jsonl"), "utf8").split("\n")[0]!);
const read = (...lines: object[]) => readResultLines(lines.map(formatJsonl).join(""), "f.jsonl");
const refusal = (...lines: object[]): string => {
  try {
    read(...lines);
  } catch (err) {
    return (err as Error).message;
  }
  return "read";
};

describe("readResultLines", () => {
  test("older files are read as they are: 0.1, 0.2 (closed-loop request_rate Infinity included)", () => {
    for (const name of ["v0.1-sweep.jsonl", "v0.2-sweep.jsonl", "v0.2-sweep-b.jsonl", "v0.2-multiturn.jsonl"]) {
      expect(readResultLines(readFileSync(join(FIXTURES, name), "utf8"), name).length).toBeGreaterThan(0);
    }
    expect(old().request_rate).toBe(Infinity);
  });

  test("a non-finite number where no writer puts one is refused, naming the line and the key", () => {
    expect(refusal(old(), { ...old(), mean_ttft_ms: Infinity })).toBe(
      "f.jsonl line 2 is invalid (finite numbers): mean_ttft_ms: Infinity is not a finite number",
    );
    expect(refusal({ ...old(), hdr: { ttft: [1, Number.NaN] } })).toContain("hdr.ttft[1]: NaN is not a finite number");
    expect(refusal({ ...old(), burstiness: Infinity })).toBe("read");
    // A gate's value is the line's value of its key: Infinity for a gate on a closed loop's request_rate.
    expect(refusal({ ...old(), gates: [{ expr: "request_rate<=inf", value: Infinity, pass: true, evidence: [] }] })).toBe("read");
  });

  test("a number that is text, a negative count or latency, and completed + failed other than sent are refused", () => {
    expect(refusal({ ...old(), mean_ttft_ms: "fast" })).toContain(
      'line 1 is invalid (the published JSON Schema (warmbench schema)): mean_ttft_ms: "fast" is not a number',
    );
    expect(refusal({ ...old(), p99_itl_ms: -1 })).toContain("(non-negative counts and latencies): p99_itl_ms: -1 is negative");
    expect(refusal({ ...old(), failed: 1 })).toContain("(completed + failed = sent): completed 6 + failed 1 is not the 6 sent");
  });

  test("a line of a newer schema_version is refused; a 0.4 line without its evidence block is refused", () => {
    expect(refusal({ ...old(), schema_version: 999 })).toContain("schema_version: 999 is newer than this build reads");
    expect(refusal({ ...old(), warmbench_version: "0.4.0" })).toContain("(an evidence block in every line since 0.4): evidence: missing");
  });

  test("a foreign line is no results line: left to the consumers (which say the file holds none)", () => {
    expect(read({ hello: Infinity }).length).toBe(1);
    expect(readResults(formatJsonl({ hello: Infinity }))).toEqual([]);
  });
});
