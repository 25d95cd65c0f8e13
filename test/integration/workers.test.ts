/**
 * --workers N: the compiled binary starts N-1 copies of itself, each sending its share; the coordinator gathers
 * every record and writes one result equal, in every count, to a single process's. A worker killed mid-pct and a
 * SIGINT on the coordinator end the run with a clear message, what was measured written, and no process left.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { alive } from "../helpers/process.ts";
import { BINARY, LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";
import { readSweepLines } from "../helpers/results.ts";
import { schemaProblems } from "../helpers/schema.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-workers-"));
const PCTS = [0, 50, 90];
const N = 12;
const OUT_LEN = 6;
const COUNTS = [
  "completed",
  "failed",
  "sent",
  "total_input",
  "total_output",
  "total_output_retokenized",
  "expected_cached_tokens",
  "mean_cached_tokens",
  "min_cached_tokens",
  "max_cached_tokens",
  "cached_tokens_mismatched",
  "cache_check",
  "flush_verified",
];

let mock: MockServer;
beforeAll(async () => {
  mock = await startMockServer(mockOptions({ port: 0, pageSize: 16, itlMs: 2, prefillUsPerToken: 2, recordInputs: true }));
});
afterAll(() => mock.stop());

async function sweep(tag: string, extra: string[]) {
  const out = join(dir, `${tag}.jsonl`);
  const prompts = join(dir, `${tag}-prompts.jsonl`);
  const before = mock.stats().received.length;
  const r = await runCli([
    "--model",
    LLAMA2_TOKENIZER,
    "--base-url",
    mock.url,
    "--pcts",
    PCTS.join(","),
    "--num-prompts",
    String(N),
    "--total-tokens",
    "600",
    "--output-len",
    String(OUT_LEN),
    "--max-concurrency",
    "6",
    "--settle",
    "0",
    "--output-file",
    out,
    "--dump-prompts",
    prompts,
    ...extra,
  ]);
  if (r.code !== 0) console.error(r.stderr);
  const measured = mock
    .stats()
    .received.slice(before)
    .filter((x) => x.maxNewTokens === OUT_LEN)
    .map((x) => x.inputIds.join(","));
  return { ...r, lines: readSweepLines(out), dumped: readFileSync(prompts, "utf8"), measured };
}

describe("--workers on one machine", () => {
  let single: Awaited<ReturnType<typeof sweep>>;
  beforeAll(async () => {
    single = await sweep("single", []);
  });

  for (const workers of [2, 3]) {
    test(`--workers ${workers}: every count equals one process's, the same prompts went out, one line per pct`, async () => {
      const r = await sweep(`w${workers}`, ["--workers", String(workers)]);
      expect(r.code).toBe(0);
      expect(r.stderr).not.toMatch(/ERROR|error:/);
      expect(r.lines.map((l) => l.shared_prefix_pct)).toEqual(PCTS);
      r.lines.forEach((l, k) => {
        for (const key of COUNTS) expect([key, l[key]]).toEqual([key, single.lines[k][key]]);
        expect(schemaProblems(l)).toEqual([]);
        expect(l.shards.count).toBe(workers);
        expect(l.shards.launcher).toBe("local");
        expect(l.shards.ranks.map((s: any) => s.rank)).toEqual([...Array(workers).keys()]);
        expect(l.shards.ranks.reduce((n: number, s: any) => n + s.sent, 0)).toBe(N);
        expect(new Set(l.shards.ranks.map((s: any) => s.pid)).size).toBe(workers);
        for (const s of l.shards.ranks) expect(Math.abs(s.clock_offset_ms)).toBeLessThan(2);
        expect(l.shards.failed).toEqual([]);
        expect(l.ttft_fit.n).toBe(N);
      });
      // The union of the shards' prompts is exactly the single process's prompt set, drawn in the script's order.
      expect(r.dumped).toBe(single.dumped);
      expect([...r.measured].sort()).toEqual([...single.measured].sort());
    });
  }
});

describe("--workers with working sets", () => {
  test("--workers 2 --working-set 1,3: the same cells, prompts and counts as one process", async () => {
    const single = await sweep("ws-single", ["--working-set", "1,3"]);
    const details = join(dir, "ws-w2-details.jsonl");
    const sharded = await sweep("ws-w2", ["--working-set", "1,3", "--workers", "2", "--request-details", details]);
    expect(sharded.code).toBe(0);
    // Every line's requests have ids of their own: the working set is in the id when the run sweeps several.
    const ids = readFileSync(details, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).request_id as string);
    expect(ids.length).toBe(PCTS.length * 2 * N);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.filter((id) => id.includes("w3-")).length).toBe(PCTS.length * N);
    expect(sharded.lines.map((l) => [l.shared_prefix_pct, l.working_set])).toEqual(single.lines.map((l) => [l.shared_prefix_pct, l.working_set]));
    sharded.lines.forEach((l, k) => {
      for (const key of COUNTS) expect([key, l[key]]).toEqual([key, single.lines[k][key]]);
    });
    expect(sharded.dumped).toBe(single.dumped);
    expect([...sharded.measured].sort()).toEqual([...single.measured].sort());
  });
});

describe("--workers with a request rate", () => {
  test("--workers 2 --request-rate 100,inf: the line's one schedule is split between the shards, not repeated", async () => {
    const run = async (tag: string, extra: string[]) => {
      const details = join(dir, `${tag}-details.jsonl`);
      const r = await sweep(tag, ["--pcts", "50", "--num-prompts", "40", "--request-rate", "100,inf", "--request-details", details, ...extra]);
      const rows = readFileSync(details, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      return { ...r, rows };
    };
    const single = await run("rate-single", []);
    const sharded = await run("rate-w2", ["--workers", "2"]);
    expect(sharded.code).toBe(0);
    expect(sharded.lines.map((l) => Number(l.request_rate))).toEqual([100, Infinity]);
    const [open, closed] = sharded.lines;
    expect(open.completed).toBe(40);
    expect(open.shards.ranks.map((s: any) => s.sent)).toEqual([20, 20]);
    expect(closed.completed).toBe(40);
    // Each request's intended time is where the single schedule puts it: offsets from the first arrival agree
    // within the release's few milliseconds (a repeated schedule would send 80, and a split one built per shard
    // would put two requests at each offset).
    const offsets = (rows: any[]) => {
      const atRate = rows.filter((d) => d.request_rate === 100).sort((a, b) => a.index - b.index);
      return atRate.map((d) => d.intended_epoch_ms - atRate[0].intended_epoch_ms);
    };
    const mine = offsets(sharded.rows);
    const theirs = offsets(single.rows);
    expect(mine.length).toBe(40);
    for (const [i, ms] of mine.entries()) expect(Math.abs(ms - theirs[i]!)).toBeLessThan(50);
    // N/R: the last of 40 requests at 100 req/s is due at 400 ms from the start, the first one gap after it.
    expect(theirs.at(-1)!).toBeLessThanOrEqual(400);
    expect(theirs.at(-1)!).toBeGreaterThan(300);
    expect(open.achieved_request_rate).toBeGreaterThan(60);
    expect(open.achieved_request_rate).toBeLessThan(160);
    expect([...sharded.measured].sort()).toEqual([...single.measured].sort());
    expect(
      sharded.rows
        .filter((d) => d.request_rate === 100)
        .map((d) => d.request_id)
        .every((id: string) => id.includes("-50@100-")),
    ).toBe(true);
  });
});

describe("--shard I/N --coordinator, for any other launcher (a Kubernetes Indexed Job, by hand)", () => {
  test("three processes started by hand make one result; the one without the secret is refused", async () => {
    const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = probe.port;
    probe.stop(true);
    const out = join(dir, "by-hand.jsonl");
    const base = [
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      mock.url,
      "--pcts",
      "0,50",
      "--num-prompts",
      "9",
      "--total-tokens",
      "300",
      "--output-len",
      "4",
      "--max-concurrency",
      "3",
      "--settle",
      "0",
      "--coordinator",
      `127.0.0.1:${port}`,
    ];
    const env = { ...process.env, NO_COLOR: "1", WARMBENCH_SHARD_TOKEN: "by-hand-secret" };
    const procs = [0, 1, 2].map((rank) =>
      Bun.spawn([BINARY, ...base, "--shard", `${rank}/3`, ...(rank === 0 ? ["--output-file", out] : [])], { stdout: "pipe", stderr: "pipe", env }),
    );
    const codes = await Promise.all(procs.map((p) => p.exited));
    expect(codes).toEqual([0, 0, 0]);
    const lines = readSweepLines(out);
    expect(lines.map((l) => [l.shared_prefix_pct, l.completed, l.shards.count, l.shards.launcher])).toEqual([
      [0, 9, 3, "flag"],
      [50, 9, 3, "flag"],
    ]);
    const stray = await runCli([...base, "--shard", "1/3"], { env: { WARMBENCH_SHARD_TOKEN: "" } });
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain("--shard 1/3: set WARMBENCH_SHARD_TOKEN to the same secret for every shard");
  });
});

/** Children of a process (the local workers of a coordinator). */
async function childrenOf(pid: number): Promise<number[]> {
  const text = await Bun.$`pgrep -P ${pid}`.nothrow().text();
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map(Number);
}

describe("a failing shard and an interrupted coordinator", () => {
  const slowArgs = (out: string, mockUrl: string) => [
    BINARY,
    "--model",
    LLAMA2_TOKENIZER,
    "--base-url",
    mockUrl,
    "--pcts",
    "0,50",
    "--num-prompts",
    "12",
    "--total-tokens",
    "200",
    "--output-len",
    "20",
    "--max-concurrency",
    "6",
    "--settle",
    "0",
    "--workers",
    "3",
    "--output-file",
    out,
  ];

  test("a worker killed mid-pct: exit 1 naming the shard within seconds, the pct written from the others, no process left", async () => {
    const slow = await startMockServer(mockOptions({ port: 0, itlMs: 50, prefillUsPerToken: 0 }));
    const out = join(dir, "killed.jsonl");
    try {
      const proc = Bun.spawn(slowArgs(out, slow.url), { stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
      let workers: number[] = [];
      for (let i = 0; i < 100 && slow.stats().running < 6; i++) await Bun.sleep(50);
      workers = await childrenOf(proc.pid);
      expect(workers).toHaveLength(2);
      process.kill(workers[1]!, "SIGKILL");
      const t0 = performance.now();
      const code = await proc.exited;
      expect(performance.now() - t0).toBeLessThan(10_000);
      const stderr = await new Response(proc.stderr).text();
      expect(code).toBe(1);
      expect(stderr).toMatch(/warmbench: error: shard \d \(.*, pid \d+\) disconnected: the pct was written with what the other shards measured/);
      const lines = readSweepLines(out);
      expect(lines).toHaveLength(1);
      expect(lines[0].interrupted).toBe(true);
      expect(lines[0].shards.failed).toHaveLength(1);
      expect(lines[0].completed + lines[0].failed).toBeLessThan(12);
      for (const w of workers) expect(alive(w)).toBe(false);
    } finally {
      await slow.stop();
    }
  });

  test("SIGINT on the coordinator stops every shard: exit 130, the pct written as interrupted, no process left", async () => {
    const slow = await startMockServer(mockOptions({ port: 0, itlMs: 50, prefillUsPerToken: 0 }));
    const out = join(dir, "sigint.jsonl");
    try {
      const proc = Bun.spawn(slowArgs(out, slow.url), { stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
      for (let i = 0; i < 100 && slow.stats().running < 6; i++) await Bun.sleep(50);
      const workers = await childrenOf(proc.pid);
      expect(workers).toHaveLength(2);
      // Until one of the first 6 (1 s each) completed: its shard then sends its next prompt. A fixed sleep raced a
      // busy box, where 1 s of 50 ms token gaps can take longer.
      const sentBefore = slow.stats().generateRequests;
      for (let i = 0; i < 200 && slow.stats().generateRequests === sentBefore; i++) await Bun.sleep(50);
      const t0 = performance.now();
      proc.kill("SIGINT");
      expect(await proc.exited).toBe(130);
      expect(performance.now() - t0).toBeLessThan(5000);
      const lines = readSweepLines(out);
      expect(lines).toHaveLength(1);
      expect(lines[0].interrupted).toBe(true);
      expect(lines[0].shards.failed).toEqual([]);
      expect(lines[0].completed).toBeGreaterThan(0);
      await Bun.sleep(200);
      for (const w of workers) expect(alive(w)).toBe(false);
      expect(slow.stats().running).toBe(0);
    } finally {
      await slow.stop();
    }
  });
});
