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

describe("a file that holds no results line", () => {
  test("empty, foreign, a JSON array or SGLang bench_serving's results: exit 2 naming the file, with or without --html", async () => {
    const dir = mkdtempSync(join(tmpdir(), "warmbench-report-none-"));
    const files: Record<string, string> = {
      "empty.jsonl": "",
      "foreign.jsonl": '{"foo":1}\n',
      "array.jsonl": "[1,2,3]\n",
      // One line of bench_serving.py's --output-file: its keys, no shared_prefix_pct, so no line of ours or the warm-cache script's.
      "bench-serving.jsonl":
        '{"backend":"sglang","dataset_name":"random","request_rate":"inf","max_concurrency":8,"completed":100,"mean_ttft_ms":51.2,"median_ttft_ms":49.8}\n',
    };
    for (const [name, text] of Object.entries(files)) {
      const path = join(dir, name);
      writeFileSync(path, text);
      for (const extra of [[], ["--html", join(dir, "x.html")]]) {
        const r = await runCli(["report", path, ...extra]);
        expect([name, extra.length, r.code]).toEqual([name, extra.length, 2]);
        expect(r.stderr).toContain(`report: ${path} holds no results line`);
        expect(r.stdout).toBe("");
      }
    }
  });
});
