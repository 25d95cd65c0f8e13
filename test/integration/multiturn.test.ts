/**
 * `warmbench multiturn` end to end: the compiled binary against the mock. Every turn's cached tokens equal its
 * page-aligned history; a device cache smaller than the conversations evicts and the run says so; a host tier wins
 * the hits back as host-tier hits whose load cost shows in TTFT; the ids are reproducible and on the wire as the
 * dump says; the OpenAI backend's re-tokenized turns are flagged approximate; bad input is refused before anything
 * is sent.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer } from "../../src/mock/server.ts";
import { mockOptions, type MockOptions } from "../../src/mock/options.ts";
import { outputTokenId } from "../../src/mock/output.ts";
import { BINARY, LLAMA2_TOKENIZER, runCli, type CliResult } from "../helpers/run-cli.ts";
import { readJsonl } from "../helpers/results.ts";
import { schemaProblems } from "../helpers/schema.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-multiturn-"));
let fileNo = 0;

const PAGE = 16;
const SYSTEM = 32;
const TURN = 64;
const OUTPUT = 8;
const CLIENTS = 4;
const ROUNDS = 5;
const conversation = [
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
];

interface Run extends CliResult {
  /** The --output-file. */
  out: string;
  rounds: any[];
  turns: any[];
  dump: any[];
  stats: ReturnType<Awaited<ReturnType<typeof startMockServer>>["stats"]>;
}

/** One multiturn run of the binary against a fresh in-process mock that records what it received. */
async function multiturn(mock: Partial<MockOptions>, args: string[]): Promise<Run> {
  const server = await startMockServer(mockOptions({ port: 0, pageSize: PAGE, ttftBaseMs: 1, prefillUsPerToken: 5, itlMs: 1, recordInputs: true, ...mock }));
  const n = ++fileNo;
  const out = join(dir, `rounds-${n}.jsonl`);
  const details = join(dir, `turns-${n}.jsonl`);
  const dump = join(dir, `dump-${n}.jsonl`);
  try {
    const r = await runCli([
      "multiturn",
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      server.url,
      ...conversation,
      "--output-file",
      out,
      "--request-details",
      details,
      "--dump-prompts",
      dump,
      ...args,
    ]);
    return { ...r, out, rounds: readJsonl(out), turns: readJsonl(details), dump: readJsonl(dump), stats: server.stats() };
  } finally {
    await server.stop();
  }
}

/** Round r's prompt length, and the cached tokens each of its turns should report: the history but its last output token, paged. */
const promptLen = (r: number) => SYSTEM + TURN + r * (OUTPUT + TURN);
const expectedTurn = (r: number) => (r === 0 ? SYSTEM : Math.floor((promptLen(r - 1) + OUTPUT - 1) / PAGE) * PAGE);

describe("4 clients x 5 rounds with a round barrier", () => {
  test("every turn finds its page-aligned history cached, and the history on the wire is the prompts plus the server's output ids", async () => {
    const r = await multiturn({}, ["--round-barrier", "--ready-queue-policy", "round-robin", "--verify-cache", "strict"]);
    if (r.code !== 0) console.error(r.stderr);
    expect(r.code).toBe(0);
    expect(r.rounds.map((l) => l.round)).toEqual([0, 1, 2, 3, 4]);
    for (const [k, l] of r.rounds.entries()) {
      expect(schemaProblems(l)).toEqual([]);
      expect("run" in l).toBe(k === 0);
      expect(l.completed).toBe(CLIENTS);
      expect(l.mean_prompt_len).toBe(promptLen(k));
      expect(l.expected_cached_tokens).toBe(CLIENTS * expectedTurn(k));
      expect(l.observed_cached_tokens).toBe(l.expected_cached_tokens);
      expect(l.cache_check).toBe("ok");
      expect(l.eviction).toBe(false);
      expect(l.approximate_turns).toBe(0);
      expect(l.flush_verified).toBe(true);
      expect(l.warm_cached_tokens).toBe(0);
      expect(l.server_cache_hit_rate).toBeCloseTo(l.observed_cached_tokens / (CLIENTS * promptLen(k)), 6);
      expect(Object.keys(l.hdr)).toEqual(["ttft_us", "tpot_us", "itl_us", "e2e_latency_us"]);
    }
    // Per turn, not only per round.
    expect(r.turns).toHaveLength(CLIENTS * ROUNDS);
    for (const t of r.turns) {
      expect(t.cached_tokens).toBe(expectedTurn(t.round));
      expect(t.expected_cached_tokens).toBe(expectedTurn(t.round));
      expect(t.cached_device_tokens).toBe(t.cached_tokens);
      expect(t.cached_host_tokens).toBe(0);
    }
    // On the wire: each turn is the previous prompt, the mock's output ids, then TURN new ids; round 0 shares the system prompt.
    const measured = r.stats.received.filter((q) => q.maxNewTokens === OUTPUT).map((q) => q.inputIds);
    expect(measured).toHaveLength(CLIENTS * ROUNDS);
    const byLen = (len: number) => measured.filter((ids) => ids.length === len);
    const firstTurns = byLen(promptLen(0));
    expect(new Set(firstTurns.map((ids) => ids.slice(0, SYSTEM).join(","))).size).toBe(1);
    const answer = Array.from({ length: OUTPUT }, (_, i) => outputTokenId(i, mockOptions().vocabSize));
    for (let round = 1; round < ROUNDS; round++) {
      const previous = byLen(promptLen(round - 1)).map((ids) => ids.join(","));
      for (const ids of byLen(promptLen(round))) {
        const prior = ids.slice(0, promptLen(round - 1)).join(",");
        expect(previous).toContain(prior);
        expect(ids.slice(promptLen(round - 1), promptLen(round - 1) + OUTPUT)).toEqual(answer);
      }
    }
    // --dump-prompts covers every turn with the ids that went out.
    expect(r.dump).toHaveLength(CLIENTS * ROUNDS);
    const sent = new Set(measured.map((ids) => ids.join(",")));
    for (const d of r.dump) {
      expect(sent.has(d.input_ids.join(","))).toBe(true);
      expect(d.expected_cached_tokens).toBe(expectedTurn(d.round));
    }
    expect(r.stdout).toContain("Observed hits: as expected in every round");
    // `warmbench report` rebuilds the round table from the file alone.
    const report = await runCli(["report", r.out]);
    expect(report.code).toBe(0);
    const rows = (text: string) => text.split("\n").filter((l) => /^\s+\d+\s+\d+\/\d+/.test(l));
    expect(rows(report.stdout)).toEqual(rows(r.stdout));
    expect(rows(report.stdout)).toHaveLength(ROUNDS);
  });

  test("the same seed gives the same ids whatever the ready-queue policy; another seed other ids", async () => {
    const key = (run: Run) => run.dump.map((d) => `${d.client}/${d.round}:${d.input_ids.join(",")}`).sort();
    const a = await multiturn({}, ["--seed", "7", "--ready-queue-policy", "fifo"]);
    const b = await multiturn({}, ["--seed", "7", "--ready-queue-policy", "random", "--think-time", "uniform:0:0.01"]);
    const c = await multiturn({}, ["--seed", "8"]);
    expect([a.code, b.code, c.code]).toEqual([0, 0, 0]);
    expect(key(b)).toEqual(key(a));
    expect(key(c)).not.toEqual(key(a));
  });
});

describe("a turn's intended time", () => {
  test("is the later of when it became ready (its answer in, the think time over) and when a slot freed", async () => {
    const THINK_MS = 60;
    // Two conversations share one slot: each turn after round 0 is ready THINK_MS after its answer, and may also wait for the other's turn.
    const r = await multiturn({}, ["--max-concurrency", "1", "--think-time", String(THINK_MS / 1000), "--num-rounds", "3", "--num-clients", "2"]);
    if (r.code !== 0) console.error(r.stderr);
    expect(r.code).toBe(0);
    expect(r.turns).toHaveLength(6);
    for (const t of r.turns) {
      // The client sent it within moments of its intended time (never before).
      expect(t.start_epoch_ms).toBeGreaterThanOrEqual(t.intended_epoch_ms);
      expect(t.start_epoch_ms - t.intended_epoch_ms).toBeLessThan(THINK_MS / 2);
    }
    for (const t of r.turns.filter((x) => x.round > 0)) {
      const before = r.turns.find((x) => x.client === t.client && x.round === t.round - 1)!;
      // Its answer ended, then the think time: the turn was not due before (Bun's timers fire on whole ms).
      expect(t.intended_epoch_ms).toBeGreaterThanOrEqual(before.start_epoch_ms + before.latency_ms + THINK_MS - 2);
    }
  });
});

describe("cache pressure: a device cache smaller than the conversations", () => {
  const args = ["--round-barrier", "--ready-queue-policy", "round-robin"];

  test("without a host tier observed hits fall below expected and the run reports eviction; the cache model expects it (strict passes)", async () => {
    const r = await multiturn({ cacheTokens: 600 }, [...args, "--verify-cache", "strict"]);
    expect(r.code).toBe(0);
    expect(r.rounds).toHaveLength(ROUNDS);
    const evicted = r.rounds.filter((l) => l.eviction === true);
    expect(evicted.length).toBeGreaterThan(0);
    for (const l of evicted) {
      expect(l.cache_shortfall_requests).toBeGreaterThan(0);
      expect(l.observed_cached_tokens).toBeLessThan(l.expected_cached_tokens);
      // An LRU cache too small for the conversations evicts as it must: within the model's range.
      expect(l.cache_check).toBe("ok");
    }
    expect(r.rounds[0].cache_capacity_tokens).toBe(600);
    expect(r.rounds.at(-1).working_set_fits).toBe(false);
    expect(r.rounds.every((l) => (l.cached_tokens_by_tier?.host ?? 0) === 0)).toBe(true);
    expect(r.stdout).toMatch(/Observed hits below expected \(eviction\) in rounds \d/);
  });

  test("a cache that drops hits it must have had fails strict (exit 4)", async () => {
    const r = await multiturn({ cacheTokens: 600, faultForgetEvery: 2 }, [...args, "--verify-cache", "strict"]);
    expect(r.code).toBe(4);
    expect(r.rounds.some((l) => l.cache_check === "mismatch")).toBe(true);
    expect(r.stderr).toMatch(/found less cached than expected/);
  });

  test("with a host tier the hits come back as host-tier hits, and the load cost shows in their TTFT", async () => {
    const loadUsPerToken = 400;
    const r = await multiturn({ cacheTokens: 600, hostCacheTokens: 20_000, hostLoadUsPerToken: loadUsPerToken }, [...args, "--verify-cache", "strict"]);
    if (r.code !== 0) console.error(r.stderr);
    expect(r.code).toBe(0);
    expect(r.rounds.every((l) => l.eviction === false && l.cache_check === "ok")).toBe(true);
    expect(r.rounds[0].host_cache_capacity_tokens).toBe(20_000);
    const fromHost = r.rounds.filter((l) => l.cached_tokens_by_tier.host > 0);
    expect(fromHost.length).toBeGreaterThan(0);
    for (const l of fromHost) {
      const host = l.ttft_by_tier.host;
      const meanHostTokens = l.cached_tokens_by_tier.host / host.requests;
      // The mock charges loadUsPerToken for every token loaded back: a floor under these turns' TTFT.
      expect(host.mean_ttft_ms).toBeGreaterThanOrEqual((meanHostTokens * loadUsPerToken) / 1000);
      if (l.ttft_by_tier.device !== null) expect(host.mean_ttft_ms).toBeGreaterThan(l.ttft_by_tier.device.mean_ttft_ms);
    }
    const hostTurns = r.turns.filter((t) => t.cached_host_tokens > 0);
    expect(hostTurns.length).toBe(fromHost.reduce((n, l) => n + l.ttft_by_tier.host.requests, 0));
    for (const t of hostTurns) expect(t.cached_device_tokens + t.cached_host_tokens).toBe(t.cached_tokens);
    expect(r.stdout).toMatch(/Hits from lower tiers: \d+ tokens from the host/);
  });
});

describe("a server that does not cache answers, stated", () => {
  test("each round's expected cached tokens are the cache model's (prompt history only), not the plan's history with answers", async () => {
    const r = await multiturn({ noOutputCache: true }, [
      "--round-barrier",
      "--output-len",
      "24",
      "--server-cache",
      "answers=uncached",
      "--verify-cache",
      "strict",
    ]);
    expect(r.code).toBe(0);
    for (const l of r.rounds) {
      const turns = r.turns.filter((t) => t.round === l.round && t.ok);
      // The plan's figure (each detail's expected_cached_tokens: the history with the answers) and the server's truth.
      const plan = turns.reduce((a, t) => a + t.expected_cached_tokens, 0);
      const served = turns.reduce((a, t) => a + t.cached_tokens, 0);
      // Nothing is evicted (the cache holds everything): the model's ceiling is what the server gives.
      expect([l.round, l.expected_cached_tokens, l.cache_check]).toEqual([l.round, served, "ok"]);
      expect(l.expected_hit_ratio).toBeCloseTo(served / turns.reduce((a, t) => a + t.prompt_len, 0), 9);
      // From round 1 the previous answers (24 tokens: always past a page end) are in each history but not in the cache:
      // the plan expects more.
      if (l.round > 0) expect(plan).toBeGreaterThan(served);
    }
  });
});

describe("a backend that returns text", () => {
  test("vllm: answers are re-tokenized, later turns flagged approximate, and checked against the part known exactly", async () => {
    const r = await multiturn({}, ["--backend", "vllm", "--round-barrier", "--verify-cache", "strict"]);
    if (r.code !== 0) console.error(r.stderr);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("turns after the first re-tokenize them and are approximate");
    expect(r.rounds[0].approximate_turns).toBe(0);
    for (const l of r.rounds.slice(1)) expect(l.approximate_turns).toBe(CLIENTS);
    for (const d of r.dump) expect(d.approximate).toBe(d.round > 0);
    for (const t of r.turns) expect(t.cached_tokens).toBeGreaterThanOrEqual(r.dump.find((d) => d.client === t.client && d.round === t.round).min_cached_tokens);
  });
});

describe("bad input: one line, exit 2, nothing sent", () => {
  const errors = (stderr: string) => stderr.split("\n").filter((l) => l.startsWith("warmbench: "));
  const refused = (r: Run, message: RegExp) => {
    expect(r.code).toBe(2);
    expect(errors(r.stderr)).toHaveLength(1);
    expect(errors(r.stderr)[0]).toMatch(message);
    expect(r.stats.generateRequests + r.stats.completionsRequests).toBe(0);
    expect(r.stats.flushes).toBe(0);
    expect(r.rounds).toEqual([]);
  };

  test("a gate scoped to a pct: no round line can match it", async () =>
    refused(
      await multiturn({}, ["--gate", "p99_ttft_ms<=800@pct>=90"]),
      /--gate "p99_ttft_ms<=800@pct>=90": its scope matches no line of this run, which will have rounds 0\.\.4/,
    ));
  test("a gate on a key a round line does not have", async () =>
    refused(
      await multiturn({}, ["--gate", "mean_cached_tokens>=1"]),
      /--gate "mean_cached_tokens>=1": mean_cached_tokens is not a numeric key of a round line/,
    ));
  test("more processes than conversations", async () =>
    refused(await multiturn({}, ["--workers", "5"]), /--workers: 5 processes for --num-clients 4: each process drives at least one conversation/));
  test("zero rounds", async () => refused(await multiturn({}, ["--num-rounds", "0"]), /--num-rounds 0: each client needs at least one round/));
  test("a working set of 0", async () => refused(await multiturn({}, ["--working-set", "0"]), /--working-set 0: a working set holds at least one/));
  test("a last turn longer than the model's context", async () => {
    refused(
      await multiturn({ contextLength: 300 }, []),
      /--num-rounds 5: the last turn's prompt would be 384 tokens .*392 > the model's context length 300 \(\/server_info\)/,
    );
  });
});

describe("gates: judged on every round line", () => {
  test("an unmeetable gate fails in every round line, the console and its summary; exit 6; a met one passes", async () => {
    const r = await multiturn({}, ["--round-barrier", "--verify-cache", "strict", "--gate", "p99_ttft_ms<=0.001", "--gate", "failed==0"]);
    expect(r.code).toBe(6);
    expect(r.rounds).toHaveLength(ROUNDS);
    for (const l of r.rounds) {
      expect(schemaProblems(l)).toEqual([]);
      expect(l.gates).toEqual([
        { expr: "p99_ttft_ms<=0.001", value: l.p99_ttft_ms, pass: false },
        { expr: "failed==0", value: 0, pass: true },
      ]);
      expect(l.p99_ttft_ms).toBeGreaterThan(0.001);
    }
    expect(r.stdout.split("\n").filter((l) => /^\s+\d+\s+\d+\/\d+.* gates FAIL 1\/2$/.test(l))).toHaveLength(ROUNDS);
    expect(r.stdout).toContain(`Gates: ${ROUNDS} of ${2 * ROUNDS} verdicts FAIL`);
    expect(r.stderr).toMatch(/(?:ERROR|\[error\])\s+5 gate verdict\(s\) failed, first p99_ttft_ms<=0\.001 at round 0 \(value [\d.]+\): exit code 6/);
    // `warmbench report` shows the same verdicts from the file alone.
    const report = await runCli(["report", r.out]);
    expect(report.stdout).toContain(`Gates: ${ROUNDS} of ${2 * ROUNDS} verdicts FAIL`);
  });

  test("gates that hold in every round: exit 0, and a run without gates has none in its lines", async () => {
    const r = await multiturn({}, ["--gate", "failed==0", "--gate", "completed>=4"]);
    expect(r.code).toBe(0);
    for (const l of r.rounds) expect(l.gates.map((g: any) => g.pass)).toEqual([true, true]);
    const bare = await multiturn({}, []);
    expect(bare.rounds.every((l) => Array.isArray(l.gates) && l.gates.length === 0)).toBe(true);
  });
});

describe("SIGINT mid-run", () => {
  test("the rounds under way are written from the turns that ended, marked interrupted; exit 130", async () => {
    const server = await startMockServer(mockOptions({ port: 0, itlMs: 40, ttftBaseMs: 1, prefillUsPerToken: 0 }));
    const out = join(dir, "sigint.jsonl");
    try {
      const proc = Bun.spawn(
        [
          BINARY,
          "multiturn",
          "--model",
          LLAMA2_TOKENIZER,
          "--base-url",
          server.url,
          "--num-clients",
          "3",
          "--num-rounds",
          "50",
          "--turn-tokens",
          "16",
          "--output-len",
          "10",
          "--settle",
          "0",
          "--output-file",
          out,
        ],
        { stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } },
      );
      // Each turn takes ~0.4 s: wait for the first rounds to be written, then stop the run mid-round.
      // Counted by finished lines: the run may be mid-write when the file is polled.
      const written = () => (existsSync(out) ? readFileSync(out, "utf8").split("\n").length - 1 : 0);
      for (let waited = 0; written() < 2 && waited < 20_000; waited += 100) await Bun.sleep(100);
      proc.kill("SIGINT");
      const code = await proc.exited;
      expect(code).toBe(130);
      const lines = readJsonl(out);
      expect(lines.length).toBeGreaterThanOrEqual(2);
      expect(lines.length).toBeLessThan(50);
      expect(lines.at(-1).interrupted).toBe(true);
      expect(lines.slice(0, 2).every((l) => l.interrupted === false && l.completed === 3)).toBe(true);
    } finally {
      await server.stop();
    }
  });
});
