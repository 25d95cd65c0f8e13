/**
 * merge computes the union's load from what the runs did, not from their flags. Two concurrency-4 runs that never
 * overlapped (one after the other: at most 4 in flight across the union, as their details show) merged into
 * offered and achieved concurrency 8, sustained, a max_concurrency of 8, and throughputs over the span from the
 * first start to the last end, gap included. And a run copied under a new run id merged as a second run, its
 * requests counted twice. The compiled binary against a mock process.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockProcess, type MockProcess } from "../helpers/mock-process.ts";
import { readSweepLines } from "../helpers/results.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-merge-load-"));
let mock: MockProcess;
let a: string;
let b: string;

const client = async (tag: string, seed: number): Promise<string> => {
  const out = join(dir, `${tag}.jsonl`);
  const r = await runCli([
    "--model",
    LLAMA2_TOKENIZER,
    "--base-url",
    mock.url,
    "--pcts",
    "0",
    "--num-prompts",
    "12",
    "--total-tokens",
    "200",
    "--output-len",
    "8",
    "--max-concurrency",
    "4",
    "--settle",
    "0",
    "--seed",
    String(seed),
    "--quiet",
    "--output-file",
    out,
    "--request-details",
    join(dir, `${tag}-details.jsonl`),
  ]);
  if (r.code !== 0) throw new Error(`${tag}: exit ${r.code}: ${r.stderr}`);
  return out;
};

beforeAll(async () => {
  mock = await startMockProcess(["--itl-ms", "5", "--ttft-base-ms", "5", "--page-size", "16"]);
  // One after the other: the second starts after the first has ended.
  a = await client("a", 1);
  await Bun.sleep(300);
  b = await client("b", 2);
});
afterAll(async () => {
  await mock.stop();
});

describe("merge computes the union's load from its requests", () => {
  test("two concurrency-4 runs that never overlapped merge into concurrency 4, over the time they measured", async () => {
    const out = join(dir, "m.jsonl");
    const r = await runCli(["merge", a, b, "-o", out]);
    expect(r.code).toBe(0);
    const [la, lb, m] = [readSweepLines(a)[0], readSweepLines(b)[0], readSweepLines(out)[0]];
    expect(Date.parse(lb.started_at)).toBeGreaterThan(Date.parse(la.started_at) + la.benchmark_duration * 1000);
    // At most 4 were ever in flight across the union, and 4 was all that was offered at any instant.
    expect(m.evidence.load.offered_concurrency).toBe(4);
    expect(m.evidence.load.achieved_concurrency).toBeLessThanOrEqual(4);
    expect(m.evidence.load.sustained).toBe(true);
    expect(m.max_concurrency).toBe(4);
    expect(m.workload.max_concurrency).toBe(4);
    // Counts add up; the window is each run's own, the gap between them left out.
    expect(m.completed).toBe(la.completed + lb.completed);
    expect(m.benchmark_duration).toBeCloseTo(la.benchmark_duration + lb.benchmark_duration, 6);
    expect(m.request_throughput).toBeCloseTo(m.completed / (la.benchmark_duration + lb.benchmark_duration), 2);
  });

  test("a run copied under a new run id is refused, naming both files; --allow-copy merges it", async () => {
    const runId = readSweepLines(a)[0].run_id as string;
    const copy = join(dir, "a-copy.jsonl");
    writeFileSync(copy, readFileSync(a, "utf8").replaceAll(`"${runId}"`, '"copyofaa"'));
    const refused = await runCli(["merge", a, copy, "-o", join(dir, "copied.jsonl")]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `merge: ${copy} (run copyofaa) measured exactly what ${a} (run ${runId}) did, line for line: a copy under a new run id would count its requests twice (--allow-copy merges it anyway)`,
    );
    expect(readSweepLines(join(dir, "copied.jsonl"))).toEqual([]);
    const allowed = await runCli(["merge", a, copy, "-o", join(dir, "allowed.jsonl"), "--allow-copy"]);
    expect(allowed.code).toBe(0);
    expect(readSweepLines(join(dir, "allowed.jsonl"))[0].completed).toBe(24);
  });
});
