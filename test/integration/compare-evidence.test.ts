/**
 * `compare` fails (exit 7) on missing evidence, not only on slower numbers: a NEW that lost a BASE line (a candidate
 * that stopped early), failed more requests, lost the flush proof, or whose client saturated. Runs of the compiled
 * binary against mocks with faults; the saturated client is one key of a real line edited (it cannot be provoked
 * reliably on a shared box). Multi-turn files compare round by round through the same path.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions, type MockOptions } from "../../src/mock/options.ts";
import { formatJsonl, parseJsonlLine } from "../../src/report/jsonl.ts";
import { healthyRun } from "../helpers/healthy-run.ts";
import { LLAMA2_TOKENIZER, runCli, type CliResult } from "../helpers/run-cli.ts";
import { readSweepLines } from "../helpers/results.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-compare-evidence-"));
const mocks: MockServer[] = [];
/** Loose limits: these tests are about evidence, not speed, on a shared 2-core box. */
const LOOSE = ["--only", "mean_itl_ms", "--max-regress", "mean_itl_ms=10000%"];

async function mockWith(over: Partial<MockOptions> = {}): Promise<MockServer> {
  const m = await startMockServer(mockOptions({ port: 0, pageSize: 16, itlMs: 2, ttftBaseMs: 5, prefillUsPerToken: 5, ...over }));
  mocks.push(m);
  return m;
}

/** One sweep; `code` is the exit it must give (3: some measured requests failed). */
async function sweep(over: Partial<MockOptions>, name: string, pcts = "0,80", code = 0): Promise<string> {
  const mock = await mockWith(over);
  const out = join(dir, `${name}.jsonl`);
  const r = await healthyRun(
    [
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      mock.url,
      "--pcts",
      pcts,
      "--num-prompts",
      "8",
      "--total-tokens",
      "1000",
      "--output-len",
      "8",
      "--max-concurrency",
      "4",
      "--settle",
      "0",
      "--output-file",
      out,
    ],
    out,
  );
  if (r.code !== code) throw new Error(`run ${name} exited ${r.code}: ${r.stderr}`);
  return out;
}

async function multiturn(name: string): Promise<string> {
  // Steps long enough that every answer streams token by token (an ITL of 0 would make any change "worse from 0").
  const mock = await mockWith({ itlMs: 8 });
  const out = join(dir, `${name}.jsonl`);
  const r = await healthyRun(
    [
      "multiturn",
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      mock.url,
      "--num-clients",
      "3",
      "--num-rounds",
      "3",
      "--shared-system-tokens",
      "64",
      "--turn-tokens",
      "32",
      "--output-len",
      "8",
      "--settle",
      "0",
      "--output-file",
      out,
    ],
    out,
  );
  if (r.code !== 0) throw new Error(`multiturn ${name} exited ${r.code}: ${r.stderr}`);
  return out;
}

/** A line with one of its completed requests failed instead, its evidence block saying the same. */
const failedOne = (l: any) => ({
  ...l,
  completed: l.completed - 1,
  failed: l.failed + 1,
  evidence: { ...l.evidence, requests: { ...l.evidence.requests, finished: l.evidence.requests.finished - 1 } },
});

/** A copy of a results file with `edit` applied to each parsed line (null drops it). */
function edited(file: string, name: string, edit: (line: any) => any): string {
  // A run of its own (compare refuses the same run on both sides), then the edit.
  const lines = readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map(parseJsonlLine)
    .map((l: any) => ({ ...l, run_id: name, evidence: l.evidence ? { ...l.evidence, run_ids: [name] } : undefined }))
    .map(edit)
    .filter((l) => l !== null);
  const out = join(dir, `${name}.jsonl`);
  writeFileSync(out, lines.map(formatJsonl).join(""));
  return out;
}

const compare = (args: string[]): Promise<CliResult> => runCli(["compare", ...args, ...LOOSE]);

let base: string;
let same: string;
let short: string;
let failing: string;
let lying: string;
let roundsA: string;
let roundsB: string;

beforeAll(async () => {
  // One at a time: runs side by side on a 2-core box would measure each other.
  base = await sweep({}, "base");
  same = await sweep({}, "same");
  short = await sweep({}, "short", "0");
  failing = await sweep({ failEvery: 4 }, "failing", "0,80", 3);
  lying = await sweep({ flushLies: true }, "lying");
  roundsA = await multiturn("rounds-a");
  roundsB = await multiturn("rounds-b");
});

afterAll(async () => {
  for (const m of mocks) await m.stop();
});

describe("compare fails on missing evidence", () => {
  test("the control: identical mocks pass", async () => {
    const r = await compare([base, same]);
    if (r.code !== 0) console.error(r.stdout, r.stderr);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("No regression beyond the limits (2 lines compared).");
  });

  test("a NEW missing a BASE line (a candidate that stopped before 80 %) exits 7 naming it", async () => {
    const r = await compare([base, short]);
    expect(r.code).toBe(7);
    expect(r.stdout).toContain("lines only in BASE (not compared): 80%");
    expect(r.stdout).toContain("1 failing check(s): 80%: in BASE, missing from NEW");
    expect(r.stderr).toContain("80%: in BASE, missing from NEW (did the candidate stop early? --allow-missing accepts it)");
    expect(r.stderr).toContain("exit code 7");
  });

  test("--allow-missing accepts it, and says which lines were missing", async () => {
    const r = await compare([base, short, "--allow-missing"]);
    if (r.code !== 0) console.error(r.stdout, r.stderr);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("lines only in BASE (not compared): 80% (missing from NEW, accepted by --allow-missing)");
    expect(r.stdout).toContain("No regression beyond the limits (1 lines compared).");
    expect(r.stderr).toContain("compare --allow-missing: not compared, missing from NEW: 80%");
  });

  test("a NEW with more failed requests exits 7 naming the line and both counts", async () => {
    const [l0, l80] = readSweepLines(failing);
    expect([l0.failed, l80.failed]).toEqual([2, 2]); // every 4th of 8 measured requests
    const r = await compare([base, failing]);
    expect(r.code).toBe(7);
    expect(r.stderr).toContain("0%: more_failures: 0 in BASE, 2 in NEW (any increase fails)");
    expect(r.stderr).toContain("80%: more_failures: 0 in BASE, 2 in NEW (any increase fails)");
    // The other way round nothing failed more: fewer failures are no regression.
    const back = await compare([failing, base]);
    expect(back.stdout).not.toContain("more_failures");
  });

  test("a NEW whose flush was not proven exits 7: flush_verified and cache_check lost", async () => {
    expect(readSweepLines(base).map((l) => [l.flush_verified, l.cache_check])).toEqual([
      [true, "ok"],
      [true, "ok"],
    ]);
    expect(readSweepLines(lying).map((l) => l.flush_verified)).toEqual([false, false]);
    const r = await compare([base, lying]);
    expect(r.code).toBe(7);
    expect(r.stderr).toContain("0%: cache_unproven: flush_verified true in BASE, false in NEW (the flush was not proven)");
    expect(r.stderr).toContain("80%: cache_unproven: cache_check ok in BASE, mismatch in NEW (the cache was no longer proven)");
    // A BASE without the proof does not make a NEW that has it fail.
    expect((await compare([lying, base])).code).toBe(0);
  });

  test("a NEW line whose client saturated is untrustworthy, not slower: exit 7", async () => {
    const saturated = edited(same, "saturated", (l) =>
      l.shared_prefix_pct === 80 ? { ...l, client_saturated: true, evidence: { ...l.evidence, client_healthy: false } } : l,
    );
    const r = await compare([base, saturated]);
    expect(r.code).toBe(7);
    expect(r.stderr).toMatch(/NEW at 80% is untrustworthy: its client saturated \(loop lag p99 \d+\.\d ms, CPU \d+%\)/);
    expect(r.stdout).toMatch(/^80%  mean_itl_ms .* untrustworthy$/m);
    expect(r.stdout).not.toMatch(/^80% .* (REGRESSED|worse|better)$/m);
    expect(r.stdout).toMatch(/^ 0%  mean_itl_ms .* (ok|better|worse|same)$/m);
  });
});

describe("compare on multi-turn files", () => {
  test("round lines pair by round; identical mocks pass", async () => {
    const r = await compare([roundsA, roundsB]);
    if (r.code !== 0) console.error(r.stdout, r.stderr);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^round 0  mean_itl_ms /m);
    expect(r.stdout).toMatch(/^round 2  mean_itl_ms +line /m);
    expect(r.stdout).toContain("No regression beyond the limits (3 lines compared).");
  });

  test("a round missing from NEW and a round with failed turns exit 7, by the same rules", async () => {
    const cut = edited(roundsB, "rounds-cut", (l) => (l.round === 2 ? null : l.round === 1 ? failedOne(l) : l));
    const r = await compare([roundsA, cut]);
    expect(r.code).toBe(7);
    expect(r.stderr).toContain("round 2: in BASE, missing from NEW");
    expect(r.stderr).toContain("round 1: more_failures: 0 in BASE, 1 in NEW (any increase fails)");
  });

  test("a sweep against a multi-turn file has no line in common: a usage error", async () => {
    const r = await compare([base, roundsA]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("compare: no line is in both files (BASE 0%,80%; NEW round 0,round 1,round 2)");
  });
});
