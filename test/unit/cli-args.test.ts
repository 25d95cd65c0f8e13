import { expect, test } from "bun:test";
import { normalizeFlags, RUN_ARGS, REPORT_ARGS } from "../../src/cli/args.ts";

test("a repeatable flag is collected into one value, joined by newlines, in order", () => {
  expect(normalizeFlags(["--gate", "failed==0", "--seed", "1", "--gate=p99_ttft_ms<=5@pct>=90", "--gate", "x<1"], RUN_ARGS)).toEqual([
    "--seed", "1", "--gate=failed==0\np99_ttft_ms<=5@pct>=90\nx<1",
  ]);
});

test("report takes any number of files", () => {
  expect(normalizeFlags(["a.jsonl", "b.jsonl", "--html", "r.html", "c.jsonl"], REPORT_ARGS, { variadic: true })).toEqual(["a.jsonl", "b.jsonl", "--html", "r.html", "c.jsonl"]);
  expect(() => normalizeFlags(["a.jsonl", "b.jsonl"], REPORT_ARGS)).toThrow('unexpected argument "b.jsonl"');
});
