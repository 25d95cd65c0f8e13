/**
 * `warmbench report` reads every results file it may meet: ours, one written by 0.1 (with its "run" and "summary"
 * lines), and the script's own; it re-renders the console from the file alone, TTFT model included.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, runCli } from "../helpers/run-cli.ts";

const FIXTURES = join(ROOT, "test/fixtures");

describe("report reads older files", () => {
  test("a 0.1 file (run and summary lines, camelCase model): the same console as 0.1 printed", async () => {
    const r = await runCli(["report", join(FIXTURES, "results/v0.1-sweep.jsonl")]);
    expect(r.code).toBe(0);
    const printedBy01 = await Bun.file(join(FIXTURES, "results/v0.1-sweep.console.txt")).text();
    // The one label that changed: the flush is now proven by a probe, not by the warm request.
    const expected = printedBy01.replaceAll("Flush verified (warm found 0 cached):    ", "Flush verified (probe found 0 cached):   ");
    expect(r.stdout).toBe(expected);
    expect(r.stdout.split("Serving Benchmark Result").length - 1).toBe(3);
    expect(r.stdout).toContain("Prefill cost (µs/uncached token):");
  });

  test("the script's own file: its blocks, byte for byte, and no model (it has none)", async () => {
    const r = await runCli(["report", join(FIXTURES, "metrics/script_results.jsonl")]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(await Bun.file(join(FIXTURES, "metrics/script_console.txt")).text());
  });

  test("a missing file and a broken line are usage errors naming them", async () => {
    const missing = await runCli(["report", "/nonexistent/results.jsonl"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("report: cannot read /nonexistent/results.jsonl: ENOENT");
    const broken = join(mkdtempSync(join(tmpdir(), "warmbench-report-")), "broken.jsonl");
    writeFileSync(broken, (await Bun.file(join(FIXTURES, "metrics/script_results.jsonl")).text()) + '{"half": \n');
    const r = await runCli(["report", broken]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(`warmbench: error: ${broken} line 3 is not valid JSON`);
    expect(r.stdout).toBe("");
  });
});
