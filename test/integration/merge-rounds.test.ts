/**
 * `warmbench merge` of multi-turn runs: two multiturn clients started by hand against one server, merged round by
 * round by the same code path as sweep lines (merge-rules.ts): turns, clients and cached tokens add up, means are
 * exact against the union of the turn details, hit ratios are the union's, and the merged file renders as a round
 * table; runs of different shapes, or a sweep beside a multi-turn run, are refused naming what differs.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeHistogram } from "../../src/metrics/histograms.ts";
import { npMean } from "../../src/metrics/stats.ts";
import { parseJsonlLine } from "../../src/report/jsonl.ts";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";
import { schemaProblems } from "../helpers/schema.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-merge-rounds-"));
let mock: MockServer;
let a: any[];
let b: any[];
let merged: any[];
let mergeRun: Awaited<ReturnType<typeof runCli>>;

const readJsonl = (path: string): any[] => readFileSync(path, "utf8").trim().split("\n").map(parseJsonlLine);
const file = (tag: string) => join(dir, `${tag}.jsonl`);

const client = (tag: string, seed: number, clients: number, more: string[] = []) =>
  runCli([
    "multiturn",
    "--model",
    LLAMA2_TOKENIZER,
    "--base-url",
    mock.url,
    "--num-clients",
    String(clients),
    "--num-rounds",
    "3",
    "--turn-tokens",
    "16",
    "--output-len",
    "6",
    "--settle",
    "0",
    "--seed",
    String(seed),
    "--flush",
    "none",
    "--output-file",
    file(tag),
    "--request-details",
    join(dir, `${tag}-details.jsonl`),
    ...more,
  ]);

beforeAll(async () => {
  mock = await startMockServer(mockOptions({ port: 0, itlMs: 1, prefillUsPerToken: 5, ttftBaseMs: 2 }));
  // Runs of different sizes, so that a mean weighted wrongly (by line, not by turn) shows.
  const [ra, rb] = await Promise.all([client("a", 1, 2), client("b", 2, 5)]);
  expect([ra.code, rb.code]).toEqual([0, 0]);
  a = readJsonl(file("a"));
  b = readJsonl(file("b"));
  mergeRun = await runCli(["merge", file("a"), file("b"), "-o", file("m")]);
  merged = readJsonl(file("m"));
});
afterAll(() => mock.stop());

const details = (tag: string): any[] => readJsonl(join(dir, `${tag}-details.jsonl`));

describe("merge of two uncoordinated multi-turn runs", () => {
  test("one round line per round, of the round kind and schema; turns, clients and tokens add up", () => {
    expect(mergeRun.code).toBe(0);
    expect(mergeRun.stderr).toContain("into 3 round line(s)");
    expect(merged.map((l) => [l.type, l.round])).toEqual([
      ["round", 0],
      ["round", 1],
      ["round", 2],
    ]);
    merged.forEach((m, k) => {
      expect(schemaProblems(m)).toEqual([]);
      for (const key of [
        "num_clients",
        "clients_in_round",
        "sent",
        "completed",
        "failed",
        "total_input",
        "total_output",
        "expected_cached_tokens",
        "observed_cached_tokens",
        "working_set_tokens",
      ]) {
        expect([key, m[key]]).toEqual([key, a[k][key] + b[k][key]]);
      }
      for (const key of ["round", "num_rounds", "turn_tokens", "output_len", "ready_queue_policy"]) expect([key, m[key]]).toEqual([key, a[k][key]]);
      expect(m.merged.files).toEqual([file("a"), file("b")]);
      expect(m.merged.run_ids).toEqual([a[k].run_id, b[k].run_id]);
      // Both runs' turn details are there: every statistic of the round is exact (a round line has no intended-time keys).
      expect(m.merged.histogram_derived).toEqual([]);
      expect(m.merged.request_details).toEqual([join(dir, "a-details.jsonl"), join(dir, "b-details.jsonl")]);
      expect(Object.keys(m.hdr).sort()).toEqual(["e2e_latency_us", "itl_us", "tpot_us", "ttft_us"]);
      expect(decodeHistogram(m.hdr.ttft_us).totalCount).toBe(m.completed);
      expect(m.output_throughput).toBeCloseTo(m.total_output / m.benchmark_duration, 6);
      expect("mean_cached_tokens" in m || "ttft_from_intended_mean_ms" in m || "workload" in m).toBe(false);
    });
  });

  test("means are exact over the union of the turns; hit ratios are the union's, not an average of the runs'", () => {
    const all = [...details("a"), ...details("b")].filter((d) => d.ok);
    merged.forEach((m, round) => {
      const turns = all.filter((d) => d.round === round);
      expect(turns.length).toBe(m.completed);
      expect(m.mean_ttft_ms).toBeCloseTo(npMean(turns.map((d) => d.ttft_ms)), 9);
      expect(m.mean_e2e_latency_ms).toBeCloseTo(npMean(turns.map((d) => d.latency_ms)), 9);
      expect(m.mean_prompt_len).toBeCloseTo(npMean(turns.map((d) => d.prompt_len)), 9);
      const prompt = turns.reduce((s, d) => s + d.prompt_len, 0);
      expect(m.expected_hit_ratio).toBeCloseTo(turns.reduce((s, d) => s + d.expected_cached_tokens, 0) / prompt, 9);
      expect(m.observed_hit_ratio).toBeCloseTo(turns.reduce((s, d) => s + d.cached_tokens, 0) / prompt, 9);
    });
    // Later rounds hit their history: the ratios are not all 0, so a ratio merged as 0 or as the first run's shows.
    expect(merged[2].observed_hit_ratio).toBeGreaterThan(0.3);
  });

  test("the merged file renders in report as a round table of the union", async () => {
    const r = await runCli(["report", file("m")]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("multi-turn: 7 clients x 3 rounds");
    expect(r.stdout).toMatch(/^\s+2\s+7\/7\s/m);
  });

  test("refused: rounds of another conversation shape, fewer rounds, or a sweep beside a multi-turn run", async () => {
    // --turn-tokens sets the first turn too: the first key of the shape to differ is named.
    expect((await client("t", 3, 2, ["--turn-tokens", "24"])).code).toBe(0);
    const shape = await runCli(["merge", file("a"), file("t"), "-o", file("never")]);
    expect(shape.code).toBe(2);
    expect(shape.stderr).toContain(`merge: line 1: first_turn_tokens differs (${file("a")}: 16, ${file("t")}: 24)`);
    expect((await client("short", 4, 2, ["--num-rounds", "2"])).code).toBe(0);
    const rounds = await runCli(["merge", file("a"), file("short"), "-o", file("never")]);
    expect(rounds.code).toBe(2);
    expect(rounds.stderr).toContain(`merge: ${file("short")} has 2 round lines, ${file("a")} has 3`);
    const sweep = await runCli([
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      mock.url,
      "--pcts",
      "0",
      "--num-prompts",
      "2",
      "--total-tokens",
      "300",
      "--output-len",
      "6",
      "--settle",
      "0",
      "--output-file",
      file("sweep"),
    ]);
    expect(sweep.code).toBe(0);
    const mixed = await runCli(["merge", file("a"), file("sweep"), "-o", file("never")]);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toContain(`merge: ${file("sweep")} holds sweep lines, ${file("a")} round lines`);
    expect(existsSync(file("never"))).toBe(false);
  });
});
