/**
 * `warmbench merge`: two clients started by hand against one server, merged into one result: counts and tokens add
 * up, throughputs over the union window, exact means, percentiles from the merged histograms within their 3
 * significant digits of the exact union; the merged file renders in `report` like any other.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeHistogram } from "../../src/metrics/histograms.ts";
import { npMean, npMedian, npPercentile } from "../../src/metrics/stats.ts";
import { formatJsonl, parseJsonlLine } from "../../src/report/jsonl.ts";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";
import { readSweepLines } from "../helpers/results.ts";
import { schemaProblems } from "../helpers/schema.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-merge-"));
let mock: MockServer;
let a: any[];
let b: any[];
let merged: any[];
let mergeRun: Awaited<ReturnType<typeof runCli>>;

const client = (tag: string, seed: number) =>
  runCli([
    "--model",
    LLAMA2_TOKENIZER,
    "--base-url",
    mock.url,
    "--pcts",
    "0,50",
    "--num-prompts",
    "10",
    "--total-tokens",
    "300",
    "--output-len",
    "8",
    "--max-concurrency",
    "3",
    "--settle",
    "0",
    "--seed",
    String(seed),
    "--flush",
    "none",
    "--output-file",
    join(dir, `${tag}.jsonl`),
    "--request-details",
    join(dir, `${tag}-details.jsonl`),
  ]);

beforeAll(async () => {
  mock = await startMockServer(mockOptions({ port: 0, itlMs: 3, prefillUsPerToken: 5, ttftBaseMs: 2 }));
  const [ra, rb] = await Promise.all([client("a", 1), client("b", 2)]);
  expect([ra.code, rb.code]).toEqual([0, 0]);
  a = readSweepLines(join(dir, "a.jsonl"));
  b = readSweepLines(join(dir, "b.jsonl"));
  mergeRun = await runCli(["merge", join(dir, "a.jsonl"), join(dir, "b.jsonl"), "-o", join(dir, "m.jsonl")]);
  merged = readSweepLines(join(dir, "m.jsonl"));
});
afterAll(() => mock.stop());

const details = (tag: string) =>
  readFileSync(join(dir, `${tag}-details.jsonl`), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

describe("merge of two uncoordinated runs", () => {
  test("one line per pct; counts and tokens add up; throughputs over the union window", () => {
    expect(mergeRun.code).toBe(0);
    expect(merged.map((l) => l.shared_prefix_pct)).toEqual([0, 50]);
    merged.forEach((m, k) => {
      expect(schemaProblems(m)).toEqual([]);
      for (const key of ["completed", "total_input", "total_output", "num_prompts", "failed"]) {
        expect([key, m[key]]).toEqual([key, a[k][key] + b[k][key]]);
      }
      // The two clients are uncoordinated: where their lines' windows overlapped their concurrencies add up; on a
      // loaded machine one may have measured before the other began, and then the union never held more than either.
      const startOf = (l: any): number => Date.parse(l.started_at);
      const endOf = (l: any): number => startOf(l) + l.benchmark_duration * 1000;
      const overlap = startOf(a[k]) < endOf(b[k]) && startOf(b[k]) < endOf(a[k]);
      expect(m.max_concurrency).toBe(overlap ? a[k].max_concurrency + b[k].max_concurrency : Math.max(a[k].max_concurrency, b[k].max_concurrency));
      const startA = Date.parse(a[k].started_at);
      const startB = Date.parse(b[k].started_at);
      const end = Math.max(startA + a[k].benchmark_duration * 1000, startB + b[k].benchmark_duration * 1000);
      expect(m.benchmark_duration).toBeCloseTo((end - Math.min(startA, startB)) / 1000, 6);
      expect(m.output_throughput).toBeCloseTo(m.total_output / m.benchmark_duration, 6);
      expect(m.merged.files).toEqual([join(dir, "a.jsonl"), join(dir, "b.jsonl")]);
      expect(m.merged.run_ids).toEqual([a[k].run_id, b[k].run_id]);
      // Both runs' request details are there: the script's percentiles are exact, the intended-time ones from histograms.
      expect(m.merged.histogram_derived).not.toContain("p99_ttft_ms");
      expect(m.merged.histogram_derived).toContain("ttft_from_intended_p99_ms");
      expect(m.merged.request_details).toEqual([join(dir, "a-details.jsonl"), join(dir, "b-details.jsonl")]);
      expect(m.ttft_fit.n).toBe(a[k].ttft_fit.n + b[k].ttft_fit.n);
    });
  });

  test("with every run's request details, the union's percentiles are numpy's, as in a line of one run", () => {
    // 0.3 took them from the merged histograms: median_ttft_ms 51.23 where numpy on the union gave 60.73.
    const all = [...details("a"), ...details("b")];
    for (const [k, pct] of [0, 50].entries()) {
      const ttftS = all.filter((d) => d.pct === pct && d.ok).map((d) => d.ttft_ms / 1000);
      const itlS = all.filter((d) => d.pct === pct && d.ok).flatMap((d) => d.itl_ms.map((x: number) => x / 1000));
      expect(merged[k].mean_ttft_ms).toBeCloseTo(npMean(ttftS) * 1000, 9);
      expect(merged[k].median_ttft_ms).toBe(npMedian(ttftS) * 1000);
      expect(merged[k].p90_ttft_ms).toBe(npPercentile(ttftS, 90) * 1000);
      expect(merged[k].p99_ttft_ms).toBe(npPercentile(ttftS, 99) * 1000);
      expect(merged[k].p99_itl_ms).toBe(npPercentile(itlS, 99) * 1000);
    }
  });

  test("without them, percentiles agree with the exact union within the histograms' 3 significant digits (the docs' claim, measured)", async () => {
    // The same runs with their details out of reach: merge says so in the line and takes the histograms.
    const strip = (tag: string) => {
      const out = join(dir, `${tag}-nodetails.jsonl`);
      const lines = readFileSync(join(dir, `${tag}.jsonl`), "utf8")
        .trim()
        .split("\n")
        .map(parseJsonlLine)
        .map((l: any) => (l.run ? { ...l, run: { ...l.run, options: { ...l.run.options, request_details: join(dir, "gone.jsonl") } } } : l));
      writeFileSync(out, lines.map(formatJsonl).join(""));
      return out;
    };
    const out = join(dir, "m-hist.jsonl");
    const r = await runCli(["merge", strip("a"), strip("b"), "-o", out]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("which is not there: its percentiles come from the histograms");
    const hist = readSweepLines(out);
    const all = [...details("a"), ...details("b")];
    let worst = 0;
    for (const [k, pct] of [0, 50].entries()) {
      expect(hist[k].merged.histogram_derived).toContain("p99_ttft_ms");
      expect(hist[k].merged.request_details).toBeUndefined();
      const ttfts = all.filter((d) => d.pct === pct && d.ok).map((d) => d.ttft_ms);
      expect(hist[k].mean_ttft_ms).toBeCloseTo(npMean(ttfts), 9);
      for (const key of ["median_ttft_ms", "p90_ttft_ms", "p99_ttft_ms"] as const) {
        // HDR keeps 3 significant digits, and its percentile lands on a sample rather than between two (numpy's lerp).
        const nearest = ttfts.reduce((best, t) => (Math.abs(t - hist[k][key]) < Math.abs(best - hist[k][key]) ? t : best));
        worst = Math.max(worst, Math.abs(hist[k][key] - nearest) / nearest);
      }
    }
    expect(worst).toBeLessThan(2e-3);
  });

  test("files written before the intended-time figures: the script's TTFT and E2E of every file stand in", async () => {
    const older = (tag: string) => {
      const lines = readFileSync(join(dir, `${tag}.jsonl`), "utf8")
        .trim()
        .split("\n")
        .map(parseJsonlLine);
      for (const l of lines) {
        l.warmbench_version = "0.3.0"; // as the builds before those keys wrote it (0.3 wrote schema_version 2 too)
        for (const key of Object.keys(l)) if (key.includes("from_intended") || key.startsWith("schedule_lag") || key === "achieved_request_rate") delete l[key];
        for (const key of ["ttft_from_intended_us", "e2e_from_intended_us", "schedule_lag_us"]) delete l.hdr[key];
      }
      writeFileSync(join(dir, `old-${tag}.jsonl`), lines.map(formatJsonl).join(""));
    };
    older("a");
    older("b");
    const r = await runCli(["merge", join(dir, "old-a.jsonl"), join(dir, "old-b.jsonl"), "-o", join(dir, "old-m.jsonl")]);
    expect(r.code).toBe(0);
    readSweepLines(join(dir, "old-m.jsonl")).forEach((m, k) => {
      expect(m.ttft_from_intended_mean_ms).toBeCloseTo(merged[k].mean_ttft_ms, 9);
      expect(m.ttft_from_intended_p99_ms).toBe(merged[k].p99_ttft_ms);
      expect(m.schedule_lag_p99_ms).toBe(0);
      // Every file's requests are in the stand-in histograms, not the first file's alone.
      expect(decodeHistogram(m.hdr.ttft_from_intended_us).totalCount).toBe(a[k].completed + b[k].completed);
      expect(decodeHistogram(m.hdr.e2e_from_intended_us).totalCount).toBe(a[k].completed + b[k].completed);
    });
  });

  test("the merged file renders in report like any other", async () => {
    const r = await runCli(["report", join(dir, "m.jsonl")]);
    expect(r.code).toBe(0);
    expect(r.stdout.split("Serving Benchmark Result").length - 1).toBe(2);
    expect(r.stdout).toMatch(new RegExp(`Successful requests:\\s+${a[0].completed + b[0].completed}\\s`));
    expect(r.stdout).toContain("TTFT model (whole sweep)");
  });

  test("refused: one file, different pcts, missing -o", async () => {
    expect((await runCli(["merge", join(dir, "a.jsonl"), "-o", join(dir, "x.jsonl")])).stderr).toContain("merge: expects two or more");
    expect((await runCli(["merge", join(dir, "a.jsonl"), join(dir, "b.jsonl")])).stderr).toContain("merge: expects --output-file FILE (-o FILE)");
    const other = await runCli([
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      mock.url,
      "--pcts",
      "0,60",
      "--num-prompts",
      "2",
      "--total-tokens",
      "300",
      "--output-len",
      "8",
      "--settle",
      "0",
      "--output-file",
      join(dir, "c.jsonl"),
    ]);
    expect(other.code).toBe(0);
    const r = await runCli(["merge", join(dir, "a.jsonl"), join(dir, "c.jsonl"), "-o", join(dir, "y.jsonl")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`merge: line 2: shared_prefix_pct differs (${join(dir, "a.jsonl")}: 50, ${join(dir, "c.jsonl")}: 60)`);
  });

  test("refused: lines of different working sets, naming the field and the files", async () => {
    const ws = await runCli([
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      mock.url,
      "--pcts",
      "0,50",
      "--num-prompts",
      "4",
      "--total-tokens",
      "300",
      "--output-len",
      "8",
      "--settle",
      "0",
      "--working-set",
      "2",
      "--output-file",
      join(dir, "ws2.jsonl"),
    ]);
    expect(ws.code).toBe(0);
    const r = await runCli(["merge", join(dir, "a.jsonl"), join(dir, "ws2.jsonl"), "-o", join(dir, "ws-m.jsonl")]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(`warmbench: error: merge: line 1: working_set differs (${join(dir, "a.jsonl")}: 1, ${join(dir, "ws2.jsonl")}: 2)`);
    expect(existsSync(join(dir, "ws-m.jsonl"))).toBe(false);
  });

  test("refused: another model or tokenizer, or a fingerprint that differs beyond what merge adds up", async () => {
    const edit = (tag: string, over: (l: any) => any) => {
      const lines = readFileSync(join(dir, "b.jsonl"), "utf8").trim().split("\n").map(parseJsonlLine).map(over);
      writeFileSync(join(dir, `${tag}.jsonl`), lines.map(formatJsonl).join(""));
      return join(dir, `${tag}.jsonl`);
    };
    const merge = (file: string) => runCli(["merge", join(dir, "a.jsonl"), file, "-o", join(dir, "never.jsonl")]);
    const model = await merge(edit("model", (l) => ({ ...l, model: "other/model" })));
    expect(model.code).toBe(2);
    expect(model.stderr).toContain(`merge: line 1: model differs (${join(dir, "a.jsonl")}: ${LLAMA2_TOKENIZER}, ${join(dir, "model.jsonl")}: other/model)`);
    const tokenizer = await merge(edit("tok", (l) => ({ ...l, tokenizer: "other/tokenizer" })));
    expect(tokenizer.stderr).toContain("merge: line 1: tokenizer differs");
    const vocab = await merge(edit("vocab", (l) => ({ ...l, workload: { ...l.workload, vocab_size: 151_936 } })));
    expect(vocab.code).toBe(2);
    expect(vocab.stderr).toContain(
      `merge: line 1: the workload fingerprint's vocab_size differs (${join(dir, "a.jsonl")}: 32000, ${join(dir, "vocab.jsonl")}: 151936)`,
    );
    // A run routed over replicas and a run against one server were not sent the same way.
    const route = await merge(edit("route", (l) => ({ ...l, route: "prefix" })));
    expect(route.code).toBe(2);
    expect(route.stderr).toContain(`merge: line 1: route differs (${join(dir, "a.jsonl")}: undefined, ${join(dir, "route.jsonl")}: prefix)`);
    expect(existsSync(join(dir, "never.jsonl"))).toBe(false);
  });
});
