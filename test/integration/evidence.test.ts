/**
 * The evidence check (src/metrics/evidence-check.ts) on every verdict path, with the compiled binary against real mock
 * processes: each test here is a cell of docs/reference/evidence-matrix.md and fails on 0.3, where the verdict passed
 * without evidence. Lines are edited only where a defect cannot be provoked on demand (an interrupted line, a line
 * whose load was not sustained, for compare and history, which read files).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions, type MockOptions } from "../../src/mock/options.ts";
import { formatJsonl, parseJsonlLine } from "../../src/report/jsonl.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";
import { readSweepLines } from "../helpers/results.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-evidence-"));
const mocks: MockServer[] = [];

async function mockWith(over: Partial<MockOptions> = {}): Promise<MockServer> {
  const m = await startMockServer(mockOptions({ port: 0, pageSize: 16, itlMs: 2, ttftBaseMs: 5, prefillUsPerToken: 5, ...over }));
  mocks.push(m);
  return m;
}

const SMALL = ["--model", LLAMA2_TOKENIZER, "--total-tokens", "600", "--settle", "0", "--quiet"];

/** A copy of a results file as a run of its own (`name` its run id), each parsed line edited. */
function edited(file: string, name: string, edit: (line: any) => any = (l) => l): string {
  const lines = readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map(parseJsonlLine)
    .map((l: any) => edit({ ...l, run_id: name, evidence: { ...l.evidence, run_ids: [name] } }));
  const out = join(dir, `${name}.jsonl`);
  writeFileSync(out, lines.map(formatJsonl).join(""));
  return out;
}

/** Only mean ITL judged, with room no mock run exceeds: these tests are about evidence, not speed. */
const LOOSE = ["--only", "mean_itl_ms", "--max-regress", "mean_itl_ms=10000%"];

let mock: MockServer;
let base: string;

beforeAll(async () => {
  mock = await mockWith();
  base = join(dir, "base.jsonl");
  const r = await runCli([...SMALL, "--base-url", mock.url, "--pcts", "0,80", "--num-prompts", "8", "--output-len", "8", "--output-file", base]);
  if (r.code !== 0) throw new Error(r.stderr);
}, 60_000);

afterAll(async () => {
  for (const m of mocks) await m.stop();
});

describe("gates", () => {
  test("a run with one output token per request has null ITL and TPOT, and gates on them fail (exit 6)", async () => {
    const out = join(dir, "one-token.jsonl");
    const r = await runCli([
      ...SMALL,
      "--base-url",
      mock.url,
      "--pcts",
      "50",
      "--num-prompts",
      "6",
      "--output-len",
      "1",
      "--output-file",
      out,
      "--gate",
      "p99_itl_ms<=5",
      "--gate",
      "mean_tpot_ms<=5",
      "--gate",
      "p99_ttft_ms<=100000",
    ]);
    expect(r.code).toBe(6);
    const [line] = readSweepLines(out);
    expect([line.p99_itl_ms, line.mean_tpot_ms, line.evidence.samples.itl, line.evidence.samples.tpot]).toEqual([null, null, 0, 0]);
    expect(line.gates.map((g: any) => [g.expr, g.pass])).toEqual([
      ["p99_itl_ms<=5", false],
      ["mean_tpot_ms<=5", false],
      ["p99_ttft_ms<=100000", true],
    ]);
    expect(line.gates[0].evidence).toEqual(["no_samples: p99_itl_ms has no ITL sample"]);
    expect(r.stdout).toMatch(/p99_itl_ms<=5 +50% +n\/a +FAIL \(no_samples\)/);
  });

  test("a gate fails on a line whose offered rate the client could not send", async () => {
    // 200 req/s offered, one request in flight at a time, each ~50 ms: the client sends at ~20 req/s.
    const slowMock = await mockWith({ itlMs: 6 });
    const out = join(dir, "unsustained.jsonl");
    const r = await runCli([
      ...SMALL,
      "--base-url",
      slowMock.url,
      "--pcts",
      "0",
      "--num-prompts",
      "8",
      "--output-len",
      "8",
      "--request-rate",
      "200",
      "--max-concurrency",
      "1",
      "--output-file",
      out,
      "--gate",
      "p99_ttft_ms<=100000",
    ]);
    expect(r.code).toBe(6);
    const [line] = readSweepLines(out);
    expect(line.evidence.load.sustained).toBe(false);
    expect(line.evidence.load.offered_request_rate).toBe(200);
    expect(line.evidence.load.achieved_request_rate).toBeLessThan(100);
    expect(line.gates[0].pass).toBe(false);
    expect(line.gates[0].evidence[0]).toMatch(/^load_not_sustained: offered 200 req\/s, sent at \d+\.\d req\/s$/);
    // The control: the same rate with room in flight is carried, and the gate holds.
    const ok = join(dir, "sustained.jsonl");
    const c = await runCli([
      ...SMALL,
      "--base-url",
      slowMock.url,
      "--pcts",
      "0",
      "--num-prompts",
      "8",
      "--output-len",
      "8",
      "--request-rate",
      "50",
      "--max-concurrency",
      "0",
      "--output-file",
      ok,
      "--gate",
      "p99_ttft_ms<=100000",
    ]);
    expect(c.code).toBe(0);
    expect(readSweepLines(ok)[0].evidence.load.sustained).toBe(true);
  });
});

describe("compare", () => {
  test("compare fails a limited metric with no sample in NEW", async () => {
    const next = edited(base, "no-itl", (l) => ({ ...l, mean_itl_ms: null, evidence: { ...l.evidence, samples: { ...l.evidence.samples, itl: 0 } } }));
    const r = await runCli(["compare", base, next, ...LOOSE]);
    expect(r.code).toBe(7);
    expect(r.stderr).toContain("0%: no_samples: mean_itl_ms has no ITL sample in NEW");
    // A metric the user named must rest on samples in BASE too.
    const back = await runCli(["compare", next, edited(base, "fresh-itl"), ...LOOSE]);
    expect(back.code).toBe(7);
    expect(back.stderr).toContain("0%: no_samples: mean_itl_ms has no ITL sample in BASE");
  });

  test("compare fails an interrupted NEW", async () => {
    const next = edited(base, "interrupted", (l) => (l.shared_prefix_pct === 80 ? { ...l, interrupted: true } : l));
    const r = await runCli(["compare", base, next, ...LOOSE]);
    expect(r.code).toBe(7);
    expect(r.stderr).toContain("80%: interrupted: the run was stopped while the line was measured");
    // 4 of 8 sent without a signal: incomplete is the same defect.
    const cut = edited(base, "cut", (l) => ({
      ...l,
      sent: 4,
      completed: 4,
      evidence: { ...l.evidence, complete: false, requests: { ...l.evidence.requests, sent: 4, finished: 4 } },
    }));
    const c = await runCli(["compare", base, cut, ...LOOSE]);
    expect(c.code).toBe(7);
    expect(c.stderr).toContain("0%: interrupted: 4 of 8 planned requests were sent");
    // An interrupted BASE proves nothing either.
    const back = await runCli(["compare", next, edited(base, "fresh"), ...LOOSE]);
    expect(back.code).toBe(7);
    expect(back.stderr).toContain("80%: interrupted: the run was stopped while the line was measured in BASE");
  });

  test("compare fails a NEW line whose offered load was not sustained", async () => {
    const next = edited(base, "unsustained-new", (l) => ({ ...l, evidence: { ...l.evidence, load: { ...l.evidence.load, sustained: false } } }));
    const r = await runCli(["compare", base, next, ...LOOSE]);
    expect(r.code).toBe(7);
    expect(r.stderr).toContain("0%: load_not_sustained: offered 4 in flight");
  });

  test("compare refuses the same run on both sides", async () => {
    const r = await runCli(["compare", base, base, ...LOOSE]);
    expect(r.code).toBe(7);
    expect(r.stderr).toMatch(/same_run_twice: run \S+ is in BASE and in NEW/);
  });

  test("a limit on a metric neither file has is exit 2", async () => {
    const r = await runCli(["compare", base, edited(base, "other-run"), "--max-regress", "capacity_request_rate=10%"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("compare: capacity_request_rate is not a metric of these files' lines");
  });
});

describe("history", () => {
  test("history never accepts an interrupted run as a baseline", async () => {
    const db = join(dir, "interrupted.db");
    const r = await runCli(["history", "add", edited(base, "h-interrupted", (l) => ({ ...l, interrupted: true })), "--db", db]);
    expect(r.code).toBe(0);
    const list = await runCli(["history", "list", "--db", db]);
    expect(list.stdout).toMatch(/h-interrupted .* rejected +0%: interrupted: the run was stopped/);
  });

  test("history never accepts a run whose load was not sustained", async () => {
    const db = join(dir, "unsustained.db");
    const file = edited(base, "h-unsustained", (l) => ({ ...l, evidence: { ...l.evidence, load: { ...l.evidence.load, sustained: false } } }));
    expect((await runCli(["history", "add", file, "--db", db])).code).toBe(0);
    const list = await runCli(["history", "list", "--db", db]);
    expect(list.stdout).toMatch(/h-unsustained .* rejected +0%: load_not_sustained/);
    const promoted = await runCli(["history", "promote", "h-unsustained", "--db", db]);
    expect(promoted.code).toBe(0);
    expect((await runCli(["history", "list", "--db", db])).stdout).toMatch(/h-unsustained .* accepted +promoted by hand \(was rejected/);
  });
});

describe("merge", () => {
  test("merge refuses a run it already holds, directly or inside an earlier merge", async () => {
    const again = await runCli(["merge", base, base, "-o", join(dir, "twice.jsonl")]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/merge: run \S+ would be counted twice/);
    const other = edited(base, "merge-other");
    const merged = join(dir, "merged.jsonl");
    // `other` is base under a new run id: a copy, which merge refuses unless told (merge-load.test.ts).
    const ok = await runCli(["merge", base, other, "-o", merged, "--allow-copy"]);
    expect(ok.code).toBe(0);
    const [line] = readSweepLines(merged);
    expect(line.completed).toBe(16);
    expect(line.evidence.run_ids).toHaveLength(2);
    const nested = await runCli(["merge", merged, other, "-o", join(dir, "nested.jsonl"), "--allow-copy"]);
    expect(nested.code).toBe(2);
    expect(nested.stderr).toContain("merge: run merge-other would be counted twice");
  });
});
