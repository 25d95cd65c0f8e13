/**
 * `warmbench multiturn` spread over processes: --workers N starts N-1 copies of the binary, each driving its share
 * of the conversations; the coordinator writes one line per round over every process's turns, with exact cached
 * tokens per turn, the same ids a single process sends, and (with --round-barrier) no process starting round r
 * before every process finished round r-1. --shard I/N --coordinator does the same for processes a launcher started.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { BINARY, LLAMA2_TOKENIZER } from "../helpers/run-cli.ts";
import { readJsonl } from "../helpers/results.ts";
import { schemaProblems } from "../helpers/schema.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-multiturn-shards-"));
const PAGE = 16;
const SYSTEM = 32;
const TURN = 64;
const OUTPUT = 8;
const CLIENTS = 7;
const ROUNDS = 4;
const conversation = [
  "multiturn",
  "--model",
  LLAMA2_TOKENIZER,
  "--num-clients",
  String(CLIENTS),
  "--num-rounds",
  String(ROUNDS),
  "--shared-system-tokens",
  String(SYSTEM),
  "--turn-tokens",
  String(TURN),
  "--output-len",
  String(OUTPUT),
  "--settle",
  "0",
  "--verify-cache",
  "strict",
];
const promptLen = (r: number) => SYSTEM + TURN + r * (OUTPUT + TURN);
const expectedTurn = (r: number) => (r === 0 ? SYSTEM : Math.floor((promptLen(r - 1) + OUTPUT - 1) / PAGE) * PAGE);

let mock: MockServer;
beforeAll(async () => {
  // Every turn takes tens of ms, so the worker processes are alive long enough to be seen.
  mock = await startMockServer(mockOptions({ port: 0, pageSize: PAGE, ttftBaseMs: 20, prefillUsPerToken: 5, itlMs: 3, recordInputs: true }));
});
afterAll(() => mock.stop());

interface Run {
  code: number;
  stderr: string;
  rounds: any[];
  turns: any[];
  dump: any[];
  /** Measured requests the mock received during the run, in arrival order. */
  measured: { ids: string; at: number; len: number }[];
  /** The coordinator's pid and the processes it had started, seen while it ran. */
  pid: number;
  children: number[];
}

async function run(tag: string, extra: string[], env: Record<string, string> = {}): Promise<Run> {
  const out = join(dir, `${tag}.jsonl`);
  const details = join(dir, `${tag}-turns.jsonl`);
  const dump = join(dir, `${tag}-dump.jsonl`);
  const before = mock.stats().received.length;
  const proc = Bun.spawn(
    [BINARY, ...conversation, "--base-url", mock.url, "--output-file", out, "--request-details", details, "--dump-prompts", dump, ...extra],
    {
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, NO_COLOR: "1", ...env },
    },
  );
  const children = new Set<number>();
  const watch = (async () => {
    while (proc.exitCode === null) {
      for (const line of (await Bun.$`pgrep -P ${proc.pid}`.nothrow().text()).split("\n")) if (line.trim() !== "") children.add(Number(line));
      await Bun.sleep(20);
    }
  })();
  const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
  await watch;
  if (code !== 0) console.error(stderr);
  const measured = mock
    .stats()
    .received.slice(before)
    .filter((q) => q.maxNewTokens === OUTPUT)
    .map((q, k) => ({ ids: q.inputIds.join(","), at: k, len: q.inputIds.length }));
  return { code, stderr, rounds: readJsonl(out), turns: readJsonl(details), dump: readJsonl(dump), measured, pid: proc.pid, children: [...children] };
}

/** Every count a round line must have exactly, from the conversation's shape alone. */
function expectExactRounds(r: Run, processes: number): void {
  expect(r.rounds.map((l) => l.round)).toEqual([...Array(ROUNDS).keys()]);
  for (const [k, l] of r.rounds.entries()) {
    expect(schemaProblems(l)).toEqual([]);
    expect(l.completed).toBe(CLIENTS);
    expect(l.clients_in_round).toBe(CLIENTS);
    expect(l.mean_prompt_len).toBe(promptLen(k));
    expect(l.expected_cached_tokens).toBe(CLIENTS * expectedTurn(k));
    expect(l.observed_cached_tokens).toBe(CLIENTS * expectedTurn(k));
    expect(l.cached_tokens_mismatched).toBe(0);
    expect(l.cache_check).toBe("ok");
    expect(l.approximate_turns).toBe(0);
    if (processes === 1) {
      expect(l.shards).toBeNull();
      continue;
    }
    expect(l.shards.count).toBe(processes);
    expect(l.shards.failed).toEqual([]);
    expect(l.shards.ranks.map((s: any) => s.rank)).toEqual([...Array(processes).keys()]);
    // Client c runs in process c mod N.
    expect(l.shards.ranks.map((s: any) => s.sent)).toEqual([...Array(processes).keys()].map((rank) => Math.ceil((CLIENTS - rank) / processes)));
  }
  expect(r.turns).toHaveLength(CLIENTS * ROUNDS);
  for (const t of r.turns) expect([t.client, t.round, t.cached_tokens]).toEqual([t.client, t.round, expectedTurn(t.round)]);
  expect(r.measured).toHaveLength(CLIENTS * ROUNDS);
}

describe("--workers", () => {
  let single: Run;
  beforeAll(async () => {
    single = await run("single", ["--round-barrier", "--max-concurrency", "3"]);
  });

  test("--workers 3 --round-barrier: three processes send, each round exact, the same ids as one process, the barrier held", async () => {
    // One turn in flight per process: process 0 (clients 0, 3, 6) needs a third longer per round than the others,
    // which without the coordinator's barrier would start their next round early.
    const r = await run("w3", ["--workers", "3", "--round-barrier", "--max-concurrency", "3"]);
    expect(r.code).toBe(0);
    expect(single.code).toBe(0);
    expectExactRounds(r, 3);
    expectExactRounds(single, 1);
    // The three processes that sent are the coordinator and the two workers it started, seen while it ran.
    const pids = r.rounds[0].shards.ranks.map((s: any) => s.pid);
    expect(pids[0]).toBe(r.pid);
    expect(r.children.length).toBe(2);
    expect([...pids.slice(1)].sort()).toEqual([...r.children].sort());
    for (const l of r.rounds) expect(l.shards.ranks.map((s: any) => s.pid)).toEqual(pids);
    // The union of the processes' turns is exactly what one process sends.
    const key = (x: Run) => x.dump.map((d) => `${d.client}/${d.round}:${d.input_ids.join(",")}`).sort();
    expect(key(r)).toEqual(key(single));
    expect(r.measured.map((m) => m.ids).sort()).toEqual(single.measured.map((m) => m.ids).sort());
    // The barrier: the server saw every turn of round r-1 before any of round r, from whichever process.
    const roundOfLen = new Map([...Array(ROUNDS).keys()].map((k) => [promptLen(k), k]));
    const order = r.measured.map((m) => roundOfLen.get(m.len));
    expect(order).toEqual([...order].sort((a, b) => a! - b!));
    expect(r.rounds.every((l) => typeof l.server_cache_hit_rate === "number")).toBe(true);
  });

  test("--workers 2 without the barrier: rounds overlap across processes, every round still exact", async () => {
    const r = await run("w2", ["--workers", "2", "--think-time", "uniform:0:0.02"]);
    expect(r.code).toBe(0);
    expectExactRounds(r, 2);
    expect(r.rounds.every((l) => l.server_cache_hit_rate === null)).toBe(true);
  });
});

describe("--shard I/N --coordinator (processes a launcher started)", () => {
  test("three processes started by hand make one result over all their turns", async () => {
    const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = probe.port;
    probe.stop(true);
    const out = join(dir, "by-hand.jsonl");
    const env = { ...process.env, NO_COLOR: "1", WARMBENCH_SHARD_TOKEN: "by-hand-secret" };
    const base = [BINARY, ...conversation, "--base-url", mock.url, "--round-barrier", "--coordinator", `127.0.0.1:${port}`];
    const before = mock.stats().received.length;
    const procs = [0, 1, 2].map((rank) =>
      Bun.spawn([...base, "--shard", `${rank}/3`, ...(rank === 0 ? ["--output-file", out] : [])], { stdout: "pipe", stderr: "pipe", env }),
    );
    const codes = await Promise.all(procs.map((p) => p.exited));
    expect(codes).toEqual([0, 0, 0]);
    const lines = readJsonl(out);
    expect(lines.map((l) => [l.round, l.completed, l.observed_cached_tokens, l.shards.count, l.shards.launcher])).toEqual(
      [...Array(ROUNDS).keys()].map((k) => [k, CLIENTS, CLIENTS * expectedTurn(k), 3, "flag"]),
    );
    expect(lines[0].shards.ranks.map((s: any) => s.pid)).toEqual(procs.map((p) => p.pid));
    expect(
      mock
        .stats()
        .received.slice(before)
        .filter((q) => q.maxNewTokens === OUTPUT),
    ).toHaveLength(CLIENTS * ROUNDS);
  });
});
