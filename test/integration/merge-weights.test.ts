/**
 * `merge` of runs of DIFFERENT sizes (4 prompts at concurrency 1 and 12 at concurrency 4, against a mock that runs 2
 * at once, so the second run queues and its latencies differ from the first's): every mean and deviation merge
 * computes must equal the one computed from the union of both runs' --request-details. With runs of equal size a
 * wrong weight (a file's line count, an unweighted average) gives the same number and cannot show.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { npMean } from "../../src/metrics/stats.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";
import { readSweepLines } from "../helpers/results.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-merge-weights-"));
const PCTS = [0, 50];
const OUTPUT = 6;
let mock: MockServer;
let small: any[];
let large: any[];
let merged: any[];
let union: any[];

const client = (tag: string, numPrompts: number, concurrency: number, seed: number) =>
  runCli([
    "--model",
    LLAMA2_TOKENIZER,
    "--base-url",
    mock.url,
    "--pcts",
    PCTS.join(","),
    "--num-prompts",
    String(numPrompts),
    "--total-tokens",
    "300",
    "--output-len",
    String(OUTPUT),
    "--max-concurrency",
    String(concurrency),
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
const details = (tag: string): any[] =>
  readFileSync(join(dir, `${tag}-details.jsonl`), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

beforeAll(async () => {
  mock = await startMockServer(mockOptions({ port: 0, itlMs: 3, prefillUsPerToken: 20, ttftBaseMs: 2, maxRunning: 2 }));
  // One after the other: each run's latencies are its own (concurrency 1 never queues, concurrency 4 does). One seed
  // and no flush: the large run's first prompts are the small run's, still cached, so their cached-token means differ.
  const rs = await client("small", 4, 1, 1);
  const rl = await client("large", 12, 4, 1);
  expect([rs.code, rl.code]).toEqual([0, 0]);
  small = readSweepLines(join(dir, "small.jsonl"));
  large = readSweepLines(join(dir, "large.jsonl"));
  const r = await runCli(["merge", join(dir, "small.jsonl"), join(dir, "large.jsonl"), "-o", join(dir, "m.jsonl")]);
  expect(r.code).toBe(0);
  merged = readSweepLines(join(dir, "m.jsonl"));
  union = [...details("small"), ...details("large")];
});
afterAll(() => mock.stop());

/** numpy's population std (ddof 0), as the script's np.std. */
const npStd = (xs: number[]): number => {
  const m = npMean(xs);
  return Math.sqrt(npMean(xs.map((x) => (x - m) ** 2)));
};

/** The union's figures for one pct, computed from the request details alone. */
function fromDetails(pct: number) {
  const sent = union.filter((d) => d.pct === pct);
  const ok = sent.filter((d) => d.ok);
  const lag = (d: any) => d.start_epoch_ms - d.intended_epoch_ms;
  const ttft = ok.map((d) => d.ttft_ms);
  const e2e = ok.map((d) => d.latency_ms);
  const tpot = ok.filter((d) => d.output_len > 1).map((d) => (d.latency_ms - d.ttft_ms) / (d.output_len - 1));
  const itl = ok.flatMap((d) => d.itl_ms as number[]);
  const cached = ok.filter((d) => typeof d.cached_tokens === "number");
  return {
    sizes: [sent.length, ok.length],
    mean_ttft_ms: npMean(ttft),
    std_ttft_ms: npStd(ttft),
    mean_tpot_ms: npMean(tpot),
    std_tpot_ms: npStd(tpot),
    mean_itl_ms: npMean(itl),
    std_itl_ms: npStd(itl),
    mean_e2e_latency_ms: npMean(e2e),
    std_e2e_latency_ms: npStd(e2e),
    ttft_from_intended_mean_ms: npMean(ok.map((d) => d.ttft_ms + lag(d))),
    e2e_from_intended_mean_ms: npMean(ok.map((d) => d.latency_ms + lag(d))),
    schedule_lag_mean_ms: npMean(sent.map(lag)),
    mean_cached_tokens: npMean(cached.map((d) => d.cached_tokens)),
    observed_hit_ratio: npMean(cached.map((d) => d.cached_tokens / d.prompt_len)),
  };
}

const EXACT = [
  "mean_ttft_ms",
  "std_ttft_ms",
  "mean_tpot_ms",
  "std_tpot_ms",
  "mean_itl_ms",
  "std_itl_ms",
  "mean_e2e_latency_ms",
  "std_e2e_latency_ms",
  "ttft_from_intended_mean_ms",
  "e2e_from_intended_mean_ms",
  "schedule_lag_mean_ms",
  "mean_cached_tokens",
  "observed_hit_ratio",
] as const;

const FROM_EPOCHS = new Set<string>(["ttft_from_intended_mean_ms", "e2e_from_intended_mean_ms", "schedule_lag_mean_ms"]);

describe("merge of a 4-prompt run and a 12-prompt run", () => {
  test("the runs differ in size and in their means, so a wrong weight shows", () => {
    PCTS.forEach((pct, k) => {
      expect([small[k].completed, large[k].completed]).toEqual([4, 12]);
      expect(fromDetails(pct).sizes).toEqual([16, 16]);
      // Concurrency 4 against 2 running slots queues: its TTFT and E2E are well above the lone client's.
      expect(large[k].mean_ttft_ms).toBeGreaterThan(small[k].mean_ttft_ms * 1.2);
      expect(large[k].mean_e2e_latency_ms).toBeGreaterThan(small[k].mean_e2e_latency_ms * 1.2);
    });
    expect([small[0].mean_cached_tokens, large[0].mean_cached_tokens > 0]).toEqual([0, true]);
  });

  test("every mean and deviation equals the one from the union of the request details", () => {
    PCTS.forEach((pct, k) => {
      const want = fromDetails(pct);
      for (const key of EXACT) {
        // The details carry the same doubles the runs summarized (only float summation order differs), except the
        // send and intended times, written as epoch ms: at ~1.8e12 a double holds them to 2^-12 ms, so figures built
        // from their difference agree to 1e-3 ms (a wrong weight moves them by milliseconds here).
        const tolerance = FROM_EPOCHS.has(key) ? 1e-3 : Math.max(1e-9, Math.abs(want[key]) * 1e-9);
        expect([pct, key, Math.abs(merged[k][key] - want[key]) <= tolerance]).toEqual([pct, key, true]);
      }
    });
  });
});
