/**
 * The README's gate flow on a fresh history database, against a prefill regression that mean TTFT dilutes: each
 * candidate runs the README's line (`--repeat 5 --history --gate ... --verify-cache strict --strict`), then `compare
 * history:last-green candidate.jsonl --max-regress p99_ttft_ms=10%` at the default limits. The first run on a
 * server with 50 ms of fixed overhead and 20 µs per prefill token is green on day one (it bootstraps the baseline);
 * two candidates on a server at 24 µs per token (mean TTFT +~9 % at 0 %, under its 10 % limit) both fail on the TTFT
 * model's per-token cost, and neither becomes last-green. On 0.4 the first slow candidate exited 0 and became the
 * baseline; on 0.4 the day-one compare exited 2.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockProcess, type MockProcess } from "../helpers/mock-process.ts";
import { LLAMA2_TOKENIZER, runCli, type CliResult } from "../helpers/run-cli.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-cost-model-gate-"));
const db = join(dir, "warmbench.db");
let good: MockProcess;
let slow: MockProcess;

// 16 tokens at 10 ms each: throughput moves by a few percent only, so the TTFT model is what fails the slow server.
const MOCK = ["--page-size", "16", "--ttft-base-ms", "50", "--itl-ms", "10"];

beforeAll(async () => {
  good = await startMockProcess([...MOCK, "--prefill-us-per-token", "20"]);
  slow = await startMockProcess([...MOCK, "--prefill-us-per-token", "24"]);
});

afterAll(async () => {
  await good.stop();
  await slow.stop();
});

/** One candidate: the README's run line, then its compare against history:last-green. */
async function candidate(name: string, server: MockProcess): Promise<{ compare: CliResult; md: string; runId: string }> {
  const file = join(dir, `${name}.jsonl`);
  const run = await runCli([
    "--model",
    LLAMA2_TOKENIZER,
    "--base-url",
    server.url,
    "--pcts",
    "0,90",
    "--num-prompts",
    "8",
    "--total-tokens",
    "2000",
    "--output-len",
    "16",
    "--settle",
    "0",
    "--quiet",
    "--output-file",
    file,
    "--repeat",
    "5",
    "--history",
    "--db",
    db,
    "--gate",
    "p99_ttft_ms<=800@pct>=90",
    "--gate",
    "failed==0",
    "--verify-cache",
    "strict",
    "--strict",
  ]);
  if (run.code !== 0) throw new Error(`${name}: run exited ${run.code}: ${run.stderr}`);
  const md = join(dir, `${name}.md`);
  const compare = await runCli(["compare", "history:last-green", file, "--db", db, "--max-regress", "p99_ttft_ms=10%", "--md", md]);
  const runId = /"run_id":"([^"]+)"/.exec(readFileSync(file, "utf8"))?.[1] ?? "";
  return { compare, md: readFileSync(md, "utf8"), runId };
}

/** The verdicts of one metric in compare's --md table. */
const verdicts = (md: string, metric: string): string[] =>
  md
    .split("\n")
    .filter((l) => l.startsWith("|") && l.split("|")[2]?.trim().replace(/\\_/g, "_") === metric)
    .map((l) => l.split("|").at(-2)!.trim());

describe("the README's gate flow against a per-token prefill regression", () => {
  test("green on day one; both candidates 20 % slower per prefill token fail and never become last-green", async () => {
    const first = await candidate("good-1", good);
    if (first.compare.code !== 0) console.error(first.compare.stdout, first.compare.stderr);
    expect(first.compare.code).toBe(0);
    expect(first.compare.stdout).toContain("bootstraps the baseline");

    // Each slow candidate fails: REGRESSED on the TTFT model's per-token cost (exit 7), or, where the box stalled a
    // repeat, inconclusive (exit 8, left pending); never exit 0, and mean TTFT alone (under its limit) never fails it.
    for (const name of ["slow-1", "slow-2"]) {
      const slowRun = await candidate(name, slow);
      if (slowRun.compare.code !== 7) console.error(slowRun.compare.stdout, slowRun.compare.stderr);
      expect([7, 8]).toContain(slowRun.compare.code);
      expect(["REGRESSED", "inconclusive"]).toContain(verdicts(slowRun.md, "ttft_model_prefill_us_per_token")[0]!);
      expect(verdicts(slowRun.md, "mean_ttft_ms")).not.toContain("REGRESSED");
      if (slowRun.compare.code === 7) {
        expect(slowRun.compare.stderr).toMatch(/ttft_model_prefill_us_per_token at 90%: \+\d+\.\d% \(limit 10%\)/);
        expect(slowRun.compare.stderr).toContain("is now rejected as a baseline");
      }
      // The retry of the bad build is judged against the accepted good run, never against slow-1.
      expect(slowRun.compare.stderr).toContain(`BASE is history:last-green (run ${first.runId}`);
    }

    const list = await runCli(["history", "list", "--db", db]);
    const statuses = list.stdout
      .split("\n")
      .filter((l) => /^\S{8}\s+\d{4}-/.test(l))
      .map((l) => l.split(/\s{2,}/)[7]);
    expect(statuses[0]).toBe("accepted");
    expect(statuses.slice(1)).toHaveLength(2);
    for (const s of statuses.slice(1)) expect(["rejected", "pending"]).toContain(s!);
  }, 240_000);
});
