/**
 * run --repeat N and --repeat-until-cv X through the compiled binary against a mock that counts its flushes: N lines
 * per cell with repeat 0..N-1, one flush each, the same prompts; compare of two repeated files gives intervals; a
 * gate judges a cell once, on the mean over its repeats; --repeat-until-cv stops early (and not when the target
 * cannot be met); sharded runs repeat in step; bad values exit 2 before anything is sent.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { readJsonl } from "../helpers/results.ts";
import { BINARY, LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-repeat-"));
let mock: MockServer;
let n = 0;

const SMALL = ["--pcts", "0,50", "--num-prompts", "4", "--total-tokens", "600", "--output-len", "8", "--settle", "0", "--quiet"];

/** A run against the mock: its exit, stdout, lines and the flushes the mock saw during it. */
async function run(extra: string[]) {
  const file = join(dir, `run-${n++}.jsonl`);
  const before = mock.stats().flushes;
  const r = await runCli(["--model", LLAMA2_TOKENIZER, "--base-url", mock.url, ...SMALL, "--output-file", file, ...extra]);
  return { ...r, file, lines: r.code === 2 ? [] : readJsonl(file), flushes: mock.stats().flushes - before };
}

const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

beforeAll(async () => {
  mock = await startMockServer(mockOptions({ port: 0, pageSize: 16, itlMs: 5, ttftBaseMs: 20 }));
});
afterAll(async () => {
  await mock.stop();
});

describe("run --repeat", () => {
  test("--repeat 3: three lines per cell, repeat 0..2, each after its own flush, the same prompts", async () => {
    const single = await run([]);
    expect(single.code).toBe(0);
    expect(single.lines.every((l) => !("repeat" in l))).toBe(true);
    const r = await run(["--repeat", "3"]);
    expect(r.code).toBe(0);
    expect(r.lines.map((l) => [l.shared_prefix_pct, l.repeat])).toEqual([
      [0, 0],
      [0, 1],
      [0, 2],
      [50, 0],
      [50, 1],
      [50, 2],
    ]);
    // Each repeat is flushed (and proven) as a single line is: three times the flushes of the run without --repeat.
    expect(single.flushes).toBeGreaterThanOrEqual(2);
    expect(r.flushes).toBe(3 * single.flushes);
    expect(r.lines.every((l) => l.flushed === true && l.flush_verified === true && l.cache_check === "ok")).toBe(true);
    // The warm is proven wherever there is a prefix to warm (50 %), at every repeat.
    expect(r.lines.filter((l) => l.shared_prefix_pct === 50).map((l) => l.warm_verified)).toEqual([true, true, true]);
    for (const pct of [0, 50]) {
      const hashes = r.lines.filter((l) => l.shared_prefix_pct === pct).map((l) => l.workload.prompt_ids_hash);
      expect(new Set(hashes).size).toBe(1);
      expect(hashes[0]).toBe(single.lines.find((l) => l.shared_prefix_pct === pct)!.workload.prompt_ids_hash);
    }
    expect(new Set(r.lines.map((l) => l.run_id)).size).toBe(1);
    // The console: per cell, each main metric's mean with its interval and CV.
    expect(r.stdout).toContain("Repeats of 50%: 3 of 3");
    expect(r.stdout).toMatch(/mean_itl_ms\s+\d+\.\d+\s+\d+\.\d+\.\.\d+\.\d+\s+\d+\.\d%/);
  }, 120_000);

  test("compare of two --repeat 3 files: Welch intervals over 3/3 repeats", async () => {
    const a = await run(["--repeat", "3", "--pcts", "50"]);
    const b = await run(["--repeat", "3", "--pcts", "50"]);
    const c = await runCli(["compare", a.file, b.file]);
    expect(c.stdout).toContain("verdicts from 95 % Welch intervals");
    expect(c.stdout.split("\n").find((l) => l.includes(" mean_itl_ms "))).toMatch(/[+-]\d+\.\d%\.\.[+-]\d+\.\d%\s+3\/3\s/);
  }, 120_000);

  test("a gate on a repeated cell is judged once, on the mean, with its interval", async () => {
    const r = await run(["--repeat", "3", "--gate", "mean_itl_ms<=1000", "--gate", "mean_ttft_ms<=0.001@pct=50"]);
    expect(r.code).toBe(6);
    for (const pct of [0, 50]) {
      const cell = r.lines.filter((l) => l.shared_prefix_pct === pct);
      expect(cell.slice(0, 2).map((l) => l.gates)).toEqual([[], []]);
      const gates = cell[2].gates;
      expect(gates.map((g: any) => g.expr)).toEqual(pct === 50 ? ["mean_itl_ms<=1000", "mean_ttft_ms<=0.001@pct=50"] : ["mean_itl_ms<=1000"]);
      const itl = gates[0];
      expect(itl.repeats).toBe(3);
      expect(itl.value).toBeCloseTo(mean(cell.map((l) => l.mean_itl_ms)), 9);
      expect(itl.value).not.toBe(cell[2].mean_itl_ms);
      expect(itl.ci95_low).toBeLessThan(itl.value);
      expect(itl.ci95_high).toBeGreaterThan(itl.value);
      expect(itl.pass).toBe(true);
    }
    const failed = r.lines[5].gates[1];
    expect(failed.pass).toBe(false);
    expect(failed.value).toBeCloseTo(mean(r.lines.slice(3).map((l) => l.mean_ttft_ms)), 9);
    // One verdict per cell: the failing gate is reported once, on the mean.
    expect(r.stderr.match(/gate failed at 50%: mean_ttft_ms<=0.001/g)?.length).toBe(1);
    expect(r.stderr).toContain("the mean of 3 repeats");
    expect(r.stdout).toMatch(/gate mean_ttft_ms<=0\.001@pct=50: FAIL on the mean \d+\.\d+ \(95% CI \d+\.\d+\.\.\d+\.\d+, 3 repeats\)/);
  }, 120_000);

  test("--repeat-until-cv stops a cell after 2 repeats when its CV is already below; never below 1e-9: all of --repeat", async () => {
    // Two positive values never have a CV above √2: below 1.5 the stop at 2 does not depend on the machine's noise.
    const early = await run(["--repeat", "5", "--repeat-until-cv", "150%"]);
    expect(early.code).toBe(0);
    expect(early.lines.map((l) => [l.shared_prefix_pct, l.repeat])).toEqual([
      [0, 0],
      [0, 1],
      [50, 0],
      [50, 1],
    ]);
    expect(early.stdout).toContain("Repeats of 0%: 2 of 5");
    const full = await run(["--repeat", "3", "--repeat-until-cv", "0.0000001%", "--pcts", "50"]);
    expect(full.lines.map((l) => l.repeat)).toEqual([0, 1, 2]);
    // With a gate, its metric is the one watched: output_throughput varies little on the mock, but not 1e-9 little.
    const gated = await run(["--repeat", "3", "--repeat-until-cv", "0.0000001%", "--pcts", "50", "--gate", "output_throughput>=0"]);
    expect(gated.lines.map((l) => l.repeat)).toEqual([0, 1, 2]);
  }, 120_000);

  test("--workers 2 --repeat 2: the shards repeat in step with the coordinator", async () => {
    const r = await run(["--repeat", "2", "--workers", "2", "--pcts", "50"]);
    expect(r.code).toBe(0);
    expect(r.lines.map((l) => l.repeat)).toEqual([0, 1]);
    expect(r.lines.every((l) => l.completed === 4 && l.shards.ranks.length === 2)).toBe(true);
  }, 120_000);

  test("an interrupt during a series: every line of it written, each marked interrupted and its evidence incomplete", async () => {
    const file = join(dir, "interrupted-series.jsonl");
    const args = ["--model", LLAMA2_TOKENIZER, "--base-url", mock.url, ...SMALL, "--pcts", "50", "--num-prompts", "8", "--repeat", "3"];
    const proc = Bun.spawn([BINARY, ...args, "--output-file", file], { stdout: "ignore", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
    let stderr = "";
    const reader = (async () => {
      for await (const chunk of proc.stderr) stderr += new TextDecoder().decode(chunk);
    })();
    // The third repeat has begun sending: two repeats are measured, the series is not done.
    const deadline = performance.now() + 60_000;
    while ((stderr.match(/Sending \d+ requests/g) ?? []).length < 3) {
      if (performance.now() > deadline || proc.exitCode !== null) throw new Error(`never reached the third repeat: ${stderr}`);
      await Bun.sleep(5);
    }
    process.kill(proc.pid, "SIGINT");
    expect(await proc.exited).toBe(130);
    await reader;
    const lines = readJsonl(file);
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines.map((l) => l.repeat)).toEqual(lines.map((_, i) => i));
    // 0.4 wrote the two finished repeats as complete lines, which history then took as a baseline.
    expect(lines.map((l) => [l.interrupted, l.evidence.complete])).toEqual(lines.map(() => [true, false]));
  }, 120_000);

  test("bad values exit 2 before anything is sent", async () => {
    const cases: [string[], RegExp][] = [
      [["--repeat", "0"], /--repeat: must be >= 1/],
      [["--repeat", "two"], /--repeat: expected an integer/],
      [["--repeat-until-cv", "5%"], /--repeat-until-cv needs --repeat N of 2 or more/],
      [["--repeat", "3", "--repeat-until-cv", "0"], /--repeat-until-cv 0: must be above 0%/],
      // One convention for relative values: a bare fraction is refused, with the percent it probably meant.
      [["--repeat", "3", "--repeat-until-cv", "0.05"], /--repeat-until-cv 0.05: write the percent sign \(5%\)/],
      [["--repeat", "3", "--repeat-until-cv", "5%", "--workers", "2"], /--repeat-until-cv with --workers or --shard/],
    ];
    for (const [args, message] of cases) {
      const before = mock.stats().generateRequests;
      const r = await run(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(mock.stats().generateRequests).toBe(before);
    }
  }, 60_000);
});
