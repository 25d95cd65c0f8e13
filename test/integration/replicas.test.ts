/**
 * Routed replicas: the compiled binary against three mock replicas with small caches (480 tokens: half a working set
 * of six 160-token prefixes), client-routed, --verify-cache strict. Every request's delivered hits are the serving
 * mock's own truth, lie within the cache model's range on the replica the details name (so strict passes and the
 * engine loses nothing), and the ledger's terms add up per request and per line; the policies order as they should on
 * a shared-prefix workload under cache pressure (spreading policies lose to routing, session and prefix do not).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";
import { readJsonl } from "../helpers/results.ts";
import { startTestRouter } from "../helpers/test-router.ts";
import { generateTrace, traceText } from "../helpers/mooncake-trace.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-replicas-"));
const mocks: MockServer[] = [];
afterAll(async () => {
  await Promise.all(mocks.map((m) => m.stop()));
});

let n = 0;
async function replicas(): Promise<{ urls: string[]; truths: string[] }> {
  const urls: string[] = [];
  const truths: string[] = [];
  for (let i = 0; i < 3; i++) {
    const truth = join(dir, `truth-${n}-${i}.jsonl`);
    const m = await startMockServer(mockOptions({ port: 0, pageSize: 16, itlMs: 0, ttftBaseMs: 1, prefillUsPerToken: 5, cacheTokens: 480, truthFile: truth }));
    mocks.push(m);
    urls.push(m.url);
    truths.push(truth);
  }
  n++;
  return { urls, truths };
}

async function run(route: string) {
  const { urls, truths } = await replicas();
  const out = join(dir, `${route}.jsonl`);
  const details = join(dir, `${route}-details.jsonl`);
  const r = await runCli([
    "run",
    "--model",
    LLAMA2_TOKENIZER,
    "--base-url",
    urls.join(","),
    "--route",
    route,
    "--num-prompts",
    "60",
    "--total-tokens",
    "200",
    "--output-len",
    "4",
    "--pcts",
    "80",
    "--working-set",
    "6",
    "--max-concurrency",
    "3",
    "--settle",
    "0",
    "--quiet",
    "--output-file",
    out,
    "--request-details",
    details,
    "--verify-cache",
    "strict",
  ]);
  expect(r.code, r.stderr).toBe(0);
  await Bun.sleep(250); // the mocks append their truth every 100 ms
  return { line: readJsonl(out, { validate: true })[0], details: readJsonl(details), urls, truths };
}

const results = new Map<string, Awaited<ReturnType<typeof run>>>();
const get = async (route: string) => {
  if (!results.has(route)) results.set(route, await run(route));
  return results.get(route)!;
};

describe("three mock replicas, client-routed", () => {
  for (const route of ["round-robin", "session", "prefix", "oracle", "least-in-flight", "random"]) {
    test(`${route}: every request's hits are its replica's truth; the ledger adds up per request and per line`, async () => {
      const { line, details, urls, truths } = await get(route);
      expect(line.route).toBe(route);
      expect(line.replicas.map((x: any) => x.url)).toEqual(urls);
      expect(line.replicas.reduce((a: number, x: any) => a + x.requests, 0)).toBe(60);
      const truthById = new Map<string, { replica: number; cached: number }>();
      truths.forEach((t, replica) => {
        for (const l of readFileSync(t, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((x) => JSON.parse(x))) {
          if (l.request_id) truthById.set(l.request_id, { replica, cached: l.cached_tokens });
        }
      });
      expect(details).toHaveLength(60);
      for (const d of details) {
        const truth = truthById.get(d.request_id)!;
        expect([d.request_id, d.replica, d.replica_url]).toEqual([d.request_id, truth.replica, urls[truth.replica]]);
        expect([d.request_id, d.ledger.delivered, d.cached_tokens]).toEqual([d.request_id, truth.cached, truth.cached]);
        const { available, home, guaranteed, possible, on_replica } = d.ledger;
        // The truth within the model's range on the replica that served it: the engine lost nothing.
        expect([d.request_id, guaranteed <= truth.cached, truth.cached <= possible]).toEqual([d.request_id, true, true]);
        expect(d.ledger.loss_engine).toBe(0);
        expect(available).toBeGreaterThanOrEqual(home);
        expect(on_replica).toBeGreaterThanOrEqual(guaranteed);
        expect([d.ledger.loss_routing, d.ledger.loss_eviction]).toEqual([home - guaranteed, available - home]);
      }
      const sum = (k: string) => details.reduce((a: number, d: any) => a + d.ledger[k], 0);
      expect([line.ledger_available_tokens, line.ledger_on_replica_tokens, line.ledger_modelled_tokens, line.ledger_delivered_tokens]).toEqual([
        sum("available"),
        sum("on_replica"),
        sum("guaranteed"),
        sum("delivered"),
      ]);
      expect([line.loss_routing_tokens, line.loss_eviction_tokens, line.loss_engine_tokens]).toEqual([sum("loss_routing"), sum("loss_eviction"), 0]);
      expect(line.ledger_available_tokens - line.loss_routing_tokens - line.loss_eviction_tokens).toBe(line.ledger_modelled_tokens);
      expect(line.cache_check).toBe("ok");
      expect(line.evidence.samples.ledger).toBe(60);
    }, 60_000);
  }

  test("under cache pressure: round-robin, random and least-in-flight lose to routing; session and prefix do not", async () => {
    const losses: Record<string, number[]> = {};
    for (const route of ["round-robin", "random", "least-in-flight", "session", "prefix", "oracle"]) {
      const l = (await get(route)).line;
      losses[route] = [l.loss_routing_tokens, l.loss_eviction_tokens, l.ledger_delivered_tokens];
    }
    console.log(`routing / eviction loss, delivered (tokens): ${JSON.stringify(losses)}`);
    for (const route of ["round-robin", "random", "least-in-flight"]) expect([route, losses[route]![0]! > 0]).toEqual([route, true]);
    for (const route of ["session", "prefix"]) expect([route, losses[route]![0]]).toEqual([route, 0]);
    expect(losses.prefix![2]!).toBeGreaterThanOrEqual(losses["round-robin"]![2]!);
  }, 60_000);

  test("a gate on the ledger judges it; the report draws the ledger and the per-replica split", async () => {
    const { urls } = await replicas();
    const out = join(dir, "gated.jsonl");
    const r = await runCli([
      "run",
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      urls.join(","),
      "--route",
      "round-robin",
      "--num-prompts",
      "60",
      "--total-tokens",
      "200",
      "--output-len",
      "4",
      "--pcts",
      "80",
      "--working-set",
      "6",
      "--max-concurrency",
      "3",
      "--settle",
      "0",
      "--quiet",
      "--output-file",
      out,
      "--gate",
      "loss_routing_ratio<=0.001",
      "--verify-cache",
      "strict",
    ]);
    expect(r.code).toBe(6);
    const md = join(dir, "ledger.md");
    await get("session");
    const rep = await runCli(["report", out, join(dir, "session.jsonl"), "--md", md]);
    expect(rep.code, rep.stderr).toBe(0);
    const text = readFileSync(md, "utf8");
    expect(text).toContain("### Where the cache hits went: the hit-loss ledger");
    expect(text).toMatch(/\| replicas\.route=round-robin \| 80% \| round-robin \| 60 \|/);
    const sl = (await get("session")).line;
    const row = [
      sl.ledger_available_tokens,
      sl.ledger_home_tokens,
      sl.ledger_on_replica_tokens,
      sl.ledger_modelled_tokens,
      sl.ledger_possible_tokens,
      sl.ledger_delivered_tokens,
    ].join(" \\| ");
    expect(text).toMatch(new RegExp(`\\| replicas\\.route=session \\| 80% \\| session \\| 60 \\| ${row} \\| 0% \\| \\d+(\\.\\d+)?% \\| 0% \\|`));
    expect(text).toContain("### Per replica");
  }, 60_000);

  test("bad replica lists are exit 2 before anything is sent", async () => {
    const m = await startMockServer(mockOptions({ port: 0 }));
    mocks.push(m);
    const base = ["run", "--model", LLAMA2_TOKENIZER, "--num-prompts", "2", "--pcts", "0", "--settle", "0"];
    for (const [args, message] of [
      [["--base-url", `${m.url},${m.url}`], /a replica is named twice/],
      [["--base-url", `${m.url},`], /an empty replica URL/],
      [["--base-url", m.url, "--route", "session"], /--route: routing needs several replicas/],
      [["--base-url", `${m.url},http://127.0.0.1:9`, "--workers", "2"], /one process/],
    ] as const) {
      const r = await runCli([...base, ...args]);
      expect([r.code, r.stderr]).toEqual([2, expect.stringMatching(message)]);
    }
    const cap = await runCli(["capacity", "--model", LLAMA2_TOKENIZER, "--base-url", `${m.url},http://127.0.0.1:9`, "--gate", "p99_ttft_ms<=500"]);
    expect(cap.code).toBe(2);
    expect(cap.stderr).toMatch(/routed by run and multiturn only/);
    const mt = await runCli(["multiturn", "--model", LLAMA2_TOKENIZER, "--base-url", `${m.url},http://127.0.0.1:9`, "--num-clients", "1", "--workers", "2"]);
    expect([mt.code, mt.stderr]).toEqual([2, expect.stringMatching(/one process/)]);
    expect(m.stats().generateRequests).toBe(0);
  });
});

describe("a multi-turn run over three mock replicas", () => {
  const PAGE = 16;
  const SYSTEM = 64;
  async function conversations(route: string) {
    const { urls } = await replicas();
    const out = join(dir, `mt-${route}.jsonl`);
    const details = join(dir, `mt-${route}-details.jsonl`);
    const r = await runCli([
      "multiturn",
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      urls.join(","),
      "--route",
      route,
      "--num-clients",
      "4",
      "--num-rounds",
      "4",
      "--shared-system-tokens",
      String(SYSTEM),
      "--turn-tokens",
      "40",
      "--output-len",
      "8",
      "--settle",
      "0",
      "--output-file",
      out,
      "--request-details",
      details,
    ]);
    expect(r.code, r.stderr).toBe(0);
    return { rounds: readJsonl(out, { validate: true }), details: readJsonl(details) };
  }

  /** Each round's routing loss, computed from the details alone: what the previous turn left cached, less what the replica had. */
  function routingLossByRound(details: any[]): number[] {
    const pages = (x: number) => Math.floor(x / PAGE) * PAGE;
    const byClient = new Map<number, any[]>();
    for (const d of details)
      byClient.set(
        d.client,
        [...(byClient.get(d.client) ?? []), d].sort((a, b) => a.round - b.round),
      );
    const loss = [0, 0, 0, 0];
    for (const turns of byClient.values()) {
      turns.forEach((t, k) => {
        const cachedBy = (j: number) => pages(Math.min(turns[j].prompt_len + turns[j].output_len - 1, t.prompt_len - 1));
        const available = k === 0 ? pages(SYSTEM) : cachedBy(k - 1);
        let onReplica = pages(SYSTEM);
        for (let j = 0; j < k; j++) if (turns[j].replica === t.replica) onReplica = Math.max(onReplica, cachedBy(j));
        loss[t.round] = (loss[t.round] ?? 0) + available - onReplica;
      });
    }
    return loss;
  }

  test("session routing keeps every conversation on one replica: no routing loss; round-robin loses what the details say", async () => {
    const session = await conversations("session");
    expect(session.rounds.map((l: any) => l.loss_routing_tokens)).toEqual([0, 0, 0, 0]);
    for (const c of [0, 1, 2, 3]) expect(new Set(session.details.filter((d: any) => d.client === c).map((d: any) => d.replica)).size).toBe(1);
    const rr = await conversations("round-robin");
    const independent = routingLossByRound(rr.details);
    expect(independent.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    expect(rr.rounds.map((l: any) => l.loss_routing_tokens)).toEqual(independent);
    for (const run of [session, rr]) {
      for (const d of run.details) expect([d.client, d.round, d.ledger.delivered]).toEqual([d.client, d.round, d.cached_tokens]);
      for (const l of run.rounds) {
        expect(l.ledger_available_tokens - l.loss_routing_tokens - l.loss_eviction_tokens - l.loss_engine_tokens).toBe(l.ledger_delivered_tokens);
      }
    }
  }, 60_000);
});

describe("replicas behind a router (--replicas, --routing-key, --replica-header)", () => {
  async function behind(keyHeader: string | null, more: string[]) {
    const { urls, truths } = await replicas();
    const router = startTestRouter(urls, keyHeader);
    try {
      const out = join(dir, `router-${n}.jsonl`);
      const details = join(dir, `router-${n}-details.jsonl`);
      const r = await runCli([
        "run",
        "--model",
        LLAMA2_TOKENIZER,
        "--base-url",
        router.url,
        "--replicas",
        urls.join(","),
        "--replica-header",
        "X-Served-By",
        ...more,
        "--num-prompts",
        "60",
        "--total-tokens",
        "200",
        "--output-len",
        "4",
        "--pcts",
        "80",
        "--working-set",
        "6",
        "--max-concurrency",
        "3",
        "--settle",
        "0",
        "--quiet",
        "--output-file",
        out,
        "--request-details",
        details,
      ]);
      expect(r.code, r.stderr).toBe(0);
      await Bun.sleep(250);
      return { line: readJsonl(out, { validate: true })[0], details: readJsonl(details), urls, truths };
    } finally {
      await router.stop();
    }
  }

  test("the router's choice, read from its header, is every request's replica; a session key it hashes loses nothing to routing", async () => {
    const { line, details, urls, truths } = await behind("X-Session-Affinity", ["--routing-key", "aiperf"]);
    expect(line.route).toBe("router");
    expect(line.ledger_unattributed_requests).toBe(0);
    const truthReplica = new Map<string, number>();
    truths.forEach((t, replica) => {
      for (const l of readFileSync(t, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((x) => JSON.parse(x)))
        if (l.request_id) truthReplica.set(l.request_id, replica);
    });
    for (const d of details) expect([d.request_id, d.replica_url]).toEqual([d.request_id, urls[truthReplica.get(d.request_id)!]]);
    // One prefix group, one replica: the router kept each session where its prefix was.
    // A routed sweep draws its prompts' prefixes in a seeded random order; each detail names its prefix group.
    expect(new Set(details.map((d: any) => d.prefix_group))).toEqual(new Set([0, 1, 2, 3, 4, 5]));
    for (let g = 0; g < 6; g++) expect(new Set(details.filter((d: any) => d.prefix_group === g).map((d: any) => d.replica)).size).toBe(1);
    expect(line.loss_routing_tokens).toBe(0);
    expect(line.loss_engine_tokens).toBe(0);
    expect(line.ledger_available_tokens - line.loss_routing_tokens - line.loss_eviction_tokens).toBe(line.ledger_modelled_tokens);
  }, 60_000);

  test("without a routing key the router spreads every prefix over every replica: the ledger shows the eviction it costs", async () => {
    const { line } = await behind(null, []);
    expect(line.ledger_unattributed_requests).toBe(0);
    expect(line.loss_eviction_tokens).toBeGreaterThan(0);
  }, 60_000);

  test("--replicas needs the router's answer header; --routing-key alone, or --route beside --replicas, is exit 2", async () => {
    const { urls } = await replicas();
    const base = ["run", "--model", LLAMA2_TOKENIZER, "--base-url", "http://127.0.0.1:9", "--settle", "0"];
    for (const [args, message] of [
      [["--replicas", urls.join(",")], /--replica-header NAME/],
      [["--routing-key", "smg"], /--routing-key: only --replicas reads it/],
      [
        ["--replicas", urls.join(","), "--replica-header", "X-Served-By", "--route", "session"],
        /--route: not with --replicas: with --replicas a router routes/,
      ],
      [["--replicas", urls.join(","), "--replica-header", "bad header"], /not a header name/],
    ] as const) {
      const r = await runCli([...base, ...args]);
      expect([r.code, r.stderr]).toEqual([2, expect.stringMatching(message)]);
    }
  });
});

describe("a trace replayed over three mock replicas", () => {
  test("routed by root block (session) a conversation stays on one replica: no routing loss; round-robin loses to routing; the ledger adds up", async () => {
    const trace = join(dir, "trace.jsonl");
    await Bun.write(
      trace,
      traceText(
        generateTrace({
          blockSize: 16,
          systems: 4,
          systemBlocks: 2,
          conversations: 8,
          turns: 3,
          maxTurnTokens: 40,
          turnGapMs: 60,
          startGapMs: 20,
          outputLength: 4,
          seed: 5,
        }),
      ),
    );
    const replayed = async (route: string) => {
      const { urls } = await replicas();
      const out = join(dir, `replay-${route}.jsonl`);
      const details = join(dir, `replay-${route}-details.jsonl`);
      const r = await runCli([
        "replay",
        trace,
        "--block-size",
        "16",
        "--model",
        LLAMA2_TOKENIZER,
        "--base-url",
        urls.join(","),
        "--route",
        route,
        "--time-scale",
        "0.2",
        "--settle",
        "0",
        "--quiet",
        "--output-file",
        out,
        "--request-details",
        details,
        "--verify-cache",
        "strict",
      ]);
      expect(r.code, r.stderr).toBe(0);
      const whole = readJsonl(out, { validate: true }).find((l) => l.window === undefined);
      return { whole, details: readJsonl(details) };
    };
    const session = await replayed("session");
    const rr = await replayed("round-robin");
    for (const { whole, details } of [session, rr]) {
      expect(whole.ledger_requests).toBe(details.filter((d: any) => d.ok && d.cached_tokens >= 0).length);
      expect(whole.ledger_delivered_tokens).toBe(details.reduce((a: number, d: any) => a + (d.ok && d.cached_tokens >= 0 ? d.cached_tokens : 0), 0));
      expect(whole.ledger_available_tokens - whole.loss_routing_tokens - whole.loss_eviction_tokens).toBe(whole.ledger_modelled_tokens);
      expect(whole.loss_engine_tokens).toBe(0);
      // Each request's details name the replica it went to and its ledger terms; its hits lie in its range there.
      for (const d of details.filter((x: any) => x.ok && x.cached_tokens >= 0)) {
        expect(typeof d.replica).toBe("number");
        expect([d.request_id, d.ledger.guaranteed <= d.cached_tokens, d.cached_tokens <= d.ledger.possible]).toEqual([d.request_id, true, true]);
      }
    }
    expect(session.whole.loss_routing_tokens).toBe(0);
    expect(rr.whole.loss_routing_tokens).toBeGreaterThan(0);
  }, 120_000);
});
