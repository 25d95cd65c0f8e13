import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { StoredSweepLine } from "../../../src/metrics/sweep-line.ts";
import {
  centerPython,
  formatFixed2,
  formatPythonFloat,
  padLeftAligned,
  renderConsole,
  renderJsonlReport,
  renderLineHeader,
  renderSweepLine,
} from "../../../src/report/console.ts";
import { formatJsonl, parseJsonlLine } from "../../../src/report/jsonl.ts";
import fixed2Cases from "../../fixtures/metrics/format_fixed2.json";

const FIXTURES = join(import.meta.dir, "../../fixtures/metrics");
/** Two result lines written by the script's maybe_write_summary_jsonl, and what the script printed for them. */
const scriptJsonl = readFileSync(join(FIXTURES, "script_results.jsonl"), "utf8");
const scriptConsole = readFileSync(join(FIXTURES, "script_console.txt"), "utf8");
const scriptResults = scriptJsonl
  .split("\n")
  .filter((l) => l !== "")
  .map((l) => parseJsonlLine(l) as StoredSweepLine);

/** The script's result plus our extras, as the engine adds them. */
function withExtras(base: StoredSweepLine, over: Partial<StoredSweepLine> = {}): StoredSweepLine {
  return {
    ...base,
    failed: 2,
    errors: [
      { kind: "http", message: "Bad Request: input_ids out of range", count: 1 },
      { kind: "timeout", message: "request exceeded 3600 s", count: 1 },
    ],
    errors_by_kind: { http: 1, timeout: 1 },
    interrupted: false,
    page_size: 16,
    expected_cached_tokens: 62992,
    mean_cached_tokens: 62984.25,
    min_cached_tokens: 62976,
    max_cached_tokens: 62992,
    cached_tokens_mismatched: 3,
    hdr: { ttft_us: "", tpot_us: "", itl_us: "", e2e_latency_us: "" },
    hdr_unit: "us",
    ...over,
  };
}

/** Our block with the sections between "P99 ITL" and the closing rule removed. */
function withoutExtraSections(block: string): string {
  const lines = block.split("\n");
  const p99Itl = lines.findIndex((l) => l.startsWith("P99 ITL (ms):"));
  const closing = lines.lastIndexOf("=".repeat(50));
  return [...lines.slice(0, p99Itl + 1), ...lines.slice(closing)].join("\n");
}

describe("console output equals the reference script's", () => {
  test("the fixture has both pcts", () => {
    expect(scriptResults.map((r) => r.shared_prefix_pct)).toEqual([90, 0]);
  });

  test("renderJsonlReport of the script's own JSONL reproduces its stdout byte for byte", () => {
    expect(renderJsonlReport(scriptJsonl)).toBe(scriptConsole);
  });

  test("with our extras, the script's lines are unchanged", () => {
    const expected = scriptResults.map((r) => renderLineHeader(r) + renderConsole(r)).join("");
    expect(expected).toBe(scriptConsole);
    const ours = scriptResults.map((r) => renderSweepLine(withExtras(r))).join("");
    expect(ours).not.toBe(scriptConsole);
    expect(scriptResults.map((r) => withoutExtraSections(renderSweepLine(withExtras(r)))).join("")).toBe(scriptConsole);
  });

  test("our sections", () => {
    const block = renderConsole(withExtras(scriptResults[0]!));
    const tail = block.slice(block.indexOf("P99 ITL (ms):"));
    expect(tail).toMatchInlineSnapshot(`
"P99 ITL (ms):                            12345678.90
-------------------Prefix Cache-------------------
Expected cached tokens:                  62992     
Mean cached tokens:                      62984.25  
Requests w/ unexpected cache:            3         
---------------------Failures---------------------
Failed requests:                         2         
  http: Bad Request: input_ids out of range x1
  timeout: request exceeded 3600 s x1
==================================================
"
`);
  });

  test("no Failures section without failures; n/a when the server never reported cached tokens", () => {
    const block = renderConsole(withExtras(scriptResults[1]!, { failed: 0, errors: [], mean_cached_tokens: null, cached_tokens_mismatched: null }));
    expect(block).not.toContain("Failures");
    expect(block).toContain(`${padLeftAligned("Mean cached tokens:", 40)} n/a       \n`);
    expect(block).toContain(`${padLeftAligned("Requests w/ unexpected cache:", 40)} n/a       \n`);
  });

  test("at most 5 error lines, and 'not set' for a missing max concurrency", () => {
    const errors = Array.from({ length: 8 }, (_, i) => ({ kind: "http", message: `m${i}`, count: 8 - i }));
    const block = renderConsole(withExtras(scriptResults[0]!, { failed: 36, errors, max_concurrency: 0 }));
    expect(block).toContain("  http: m4 x4\n");
    expect(block).not.toContain("  http: m5 x3");
    expect(block).toContain(`${padLeftAligned("Max request concurrency:", 40)} not set   \n`);
  });
});

describe("renderJsonlReport", () => {
  test("skips other line types and blank lines, keeps type=pct lines", () => {
    const pct = withExtras(scriptResults[0]!);
    const text = [
      formatJsonl({ type: "request", index: 0, shared_prefix_pct: 90, completed: 1 }),
      "\n",
      formatJsonl({ type: "pct", ...pct }),
      formatJsonl({ type: "run", started: "now" }),
      formatJsonl(scriptResults[1]),
    ].join("");
    expect(renderJsonlReport(text)).toBe(renderSweepLine(pct) + renderSweepLine(scriptResults[1]!));
  });

  test("a broken line is a UsageError with its line number", () => {
    expect(() => renderJsonlReport(`${scriptJsonl}{"half": `)).toThrow("JSONL line 3 is not valid JSON");
  });
});

describe("Python format helpers", () => {
  test("{:<10.2f} matches Python on ties, large, tiny and negative values", () => {
    const cases = fixed2Cases as [number, string][];
    expect(cases.length).toBeGreaterThan(800);
    const mismatches = cases.filter(([v, expected]) => padLeftAligned(formatFixed2(v), 10) !== expected);
    expect(mismatches).toEqual([]);
  });

  test("ties round to even like Python, not up like toFixed", () => {
    expect(formatFixed2(0.125)).toBe("0.12");
    expect(formatFixed2(0.375)).toBe("0.38");
    expect(formatFixed2(-0.625)).toBe("-0.62");
    expect(formatFixed2(Infinity)).toBe("inf");
    expect(formatFixed2(Number.NaN)).toBe("nan");
    expect(formatFixed2(-0)).toBe("-0.00");
  });

  test("centering puts the odd pad character on the right", () => {
    expect(centerPython("abc", 8, "-")).toBe("--abc---");
    expect(centerPython("abcd", 8, "=")).toBe("==abcd==");
    expect(centerPython("too long", 4, "-")).toBe("too long");
  });

  test("Python float str", () => {
    expect(formatPythonFloat(Infinity)).toBe("inf");
    expect(formatPythonFloat(4)).toBe("4.0");
    expect(formatPythonFloat(2.5)).toBe("2.5");
  });
});
