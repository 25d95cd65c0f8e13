/**
 * The README's gate flow as a CI job runs it: each candidate measured with `--repeat --history --gate ...
 * --verify-cache strict`, then `compare history:last-green candidate.jsonl`. Two candidates on a good server, then
 * two on a server 20 % slower per token: both slow ones fail. On 0.3 the first slow one was stored "green" by its own
 * gates, became history:last-green, and the second slow one passed against it (a CI retry of a bad build passes).
 * Only mean ITL is judged (--only): the mock's steps are exact timers, so the test does not depend on a quiet box.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { LLAMA2_TOKENIZER, runCli, type CliResult } from "../helpers/run-cli.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-gate-flow-"));
const db = join(dir, "warmbench.db");
let good: MockServer;
let slow: MockServer;

beforeAll(async () => {
  good = await startMockServer(mockOptions({ port: 0, pageSize: 16, itlMs: 20, ttftBaseMs: 5 }));
  slow = await startMockServer(mockOptions({ port: 0, pageSize: 16, itlMs: 24, ttftBaseMs: 5 }));
});

afterAll(async () => {
  await good.stop();
  await slow.stop();
});

/** One candidate: the README's run line, then its compare against history:last-green (null for the first). */
async function candidate(name: string, server: MockServer, compare = true): Promise<{ run: CliResult; compare: CliResult | null }> {
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
    "600",
    "--output-len",
    "8",
    "--settle",
    "0",
    "--quiet",
    "--output-file",
    file,
    "--repeat",
    "3",
    "--history",
    "--db",
    db,
    "--gate",
    "p99_ttft_ms<=100000@pct>=90",
    "--gate",
    "failed==0",
    "--verify-cache",
    "strict",
  ]);
  if (run.code !== 0) throw new Error(`${name}: run exited ${run.code}: ${run.stderr}`);
  if (!compare) return { run, compare: null };
  return { run, compare: await runCli(["compare", "history:last-green", file, "--db", db, "--only", "mean_itl_ms"]) };
}

describe("the README's gate flow", () => {
  test("history:last-green skips a candidate that compare found regressed", async () => {
    // Day one, a fresh database: the first candidate bootstraps the baseline and its compare says so, exit 0 (0.4
    // exited 2, "no accepted run of NEW's workload", and the README's flow was red before any regression).
    const good1 = await candidate("good-1", good);
    expect(good1.compare!.code).toBe(0);
    expect(good1.compare!.stdout).toContain("is the first accepted run of its workload");
    expect(good1.compare!.stdout).toContain("it bootstraps the baseline");
    const good2 = await candidate("good-2", good);
    if (good2.compare!.code !== 0) console.error(good2.compare!.stdout, good2.compare!.stderr);
    // Never a regression. On a box loaded well past its cores the mock's timers jitter and three repeats may not
    // decide (exit 8, a verdict "inconclusive"): compare telling the truth, and that candidate stays pending.
    expect([0, 8]).toContain(good2.compare!.code);
    expect(good2.compare!.stdout).not.toMatch(/ REGRESSED\s*$/m);
    const slow1 = await candidate("slow-1", slow);
    expect(slow1.compare!.code).toBe(7);
    expect(slow1.compare!.stderr).toContain("is now rejected as a baseline");
    // The retry of the bad build: still judged against an accepted good run, never against slow-1.
    const slow2 = await candidate("slow-2", slow);
    expect(slow2.compare!.code).toBe(7);
    expect(slow2.compare!.stderr).not.toContain("slow-1");
    const list = await runCli(["history", "list", "--db", db]);
    const statuses = list.stdout
      .split("\n")
      .filter((l) => /^\S{8}\s+\d{4}-/.test(l))
      .map((l) => l.split(/\s{2,}/)[7]);
    // An undecided candidate stays pending (never a baseline), a decided one is accepted.
    expect(statuses).toEqual(["accepted", good2.compare!.code === 0 ? "accepted" : "pending", "rejected", "rejected"]);
    expect(list.stdout).toMatch(/rejected +regressed against history:last-green \(run \S+, .*mean_itl_ms/);
  }, 240_000);
});
