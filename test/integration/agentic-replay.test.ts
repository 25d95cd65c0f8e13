/**
 * `warmbench replay` of agentic sessions end to end: the compiled binary against the mock started as a process, on
 * the eight real WEKA traces (test/fixtures/agentic, two with subagents). At --time-scale 0.05 with --verify-cache
 * strict the replay exits 0, every request's cached tokens in the mock's own truth (joined on the request id) fall
 * within the range the client predicted, and subagents of one session run at once on the server (requests of one
 * trace from different chains overlap in the truth). Over three mock replicas, session routing keeps each session on
 * one replica (routing loss 0) and round-robin shows its loss. With a cache smaller than the working set every
 * request is still within its range (the model predicts the eviction). A TraceLab CSV replays the same way.
 * --analyze reads the corpus without a server.
 *
 * Time: the eight traces take about 13 s here (--max-idle 1 caps each recorded gap at 1 trace second, 50 ms at this
 * scale; trace_0061's 838k-token prompts dominate); the replica runs use the two traces with subagents (about 4 s each).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockProcess, type MockProcess } from "../helpers/mock-process.ts";
import { readJsonl } from "../helpers/results.ts";
import { LLAMA2_TOKENIZER, ROOT, runCli } from "../helpers/run-cli.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-agentic-"));
const FIXTURES = join(ROOT, "test/fixtures/agentic");
const TRACES = readdirSync(FIXTURES).filter((f) => /^trace_\d+\.json$/.test(f));
const WITH_SUBAGENTS = ["trace_0277.json", "trace_0291.json"];

/** A corpus directory of the named traces. */
function corpus(name: string, files: readonly string[]): string {
  const to = join(dir, name);
  mkdirSync(to);
  for (const f of files) copyFileSync(join(FIXTURES, f), join(to, f));
  return to;
}

const mocks: MockProcess[] = [];
afterAll(async () => {
  await Promise.all(mocks.map((m) => m.stop()));
});

/** A mock with room for every trace (context; cache, unless `cacheTokens`) and fast answers, its truth in `truth`. */
async function mock(truth: string, cacheTokens = 100_000_000): Promise<string> {
  const m = await startMockProcess([
    "--context-length",
    "1000000",
    "--cache-tokens",
    String(cacheTokens),
    "--itl-ms",
    "0",
    "--ttft-base-ms",
    "1",
    "--prefill-us-per-token",
    "0.01",
    "--truth",
    truth,
  ]);
  mocks.push(m);
  return m.url;
}

let n = 0;
async function replay(path: string, urls: string[], args: string[]) {
  const k = ++n;
  const out = join(dir, `o-${k}.jsonl`);
  const details = join(dir, `d-${k}.jsonl`);
  const r = await runCli(
    [
      "replay",
      path,
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      urls.join(","),
      "--settle",
      "0",
      "--time-scale",
      "0.05",
      "--max-idle",
      "1",
      "--verify-cache",
      "strict",
      "--quiet",
      "--output-file",
      out,
      "--request-details",
      details,
      ...args,
    ],
    { timeoutMs: 120_000 },
  );
  await Bun.sleep(250); // the mocks append their truth every 100 ms
  return { ...r, line: readJsonl(out, { validate: true })[0], details: readJsonl(details) };
}

describe("the eight WEKA traces against the mock", () => {
  test("exit 0 under --verify-cache strict; every request's truth within its range; subagents concurrent", async () => {
    const truth = join(dir, "truth-eight.jsonl");
    const url = await mock(truth);
    const r = await replay(corpus("eight", TRACES), [url], []);
    expect(r.code, r.stderr).toBe(0);
    const line = r.line;
    expect(line.cache_check).toBe("ok");
    expect(line.failed).toBe(0);
    expect(line.agentic.trace_format).toBe("weka");
    expect(line.agentic.sessions).toBe(8);
    expect(line.agentic.lanes).toBe(8);
    expect(line.agentic.delay_rule).toBe("end-to-start");
    // 139 calls in the eight traces (python: every "n"/"s" request, subagents' included).
    expect(r.details).toHaveLength(139);
    expect(line.agentic.turns_per_session.max).toBe(53);
    // Every request's truth (the mock's cached tokens, by request id) within the client's predicted range.
    const served = new Map(readJsonl(truth).map((t: any) => [t.request_id, t]));
    for (const d of r.details) {
      const t = served.get(d.request_id);
      expect(t, d.request_id).toBeDefined();
      expect(t.cached_tokens).toBe(d.cached_tokens);
      expect(t.cached_tokens).toBeGreaterThanOrEqual(d.expected_cached_tokens_lower);
      expect(t.cached_tokens).toBeLessThanOrEqual(d.expected_cached_tokens_upper);
    }
    // A session reuses its history: most of its prompt tokens hit. With nothing evicted, each session's truth is at
    // least what an infinite cache certainly held and at most its ceiling (a sibling's prefill in flight may or may
    // not have been inserted: which, depends on timing), and the line's ceiling is the details' one.
    expect(line.agentic.session_hit_ratio.mean).toBeGreaterThan(0.5);
    const perSession = new Map<number, { prompt: number; truth: number; certain: number; ceiling: number }>();
    for (const d of r.details) {
      const s = perSession.get(d.session) ?? { prompt: 0, truth: 0, certain: 0, ceiling: 0 };
      s.prompt += d.prompt_len;
      s.truth += served.get(d.request_id).cached_tokens;
      s.certain += d.expected_cached_tokens_infinite;
      s.ceiling += d.expected_cached_tokens_ceiling;
      perSession.set(d.session, s);
    }
    for (const [session, s] of perSession) {
      expect(s.truth, `session ${session}`).toBeGreaterThanOrEqual(s.certain);
      expect(s.truth, `session ${session}`).toBeLessThanOrEqual(s.ceiling);
    }
    const ceilings = [...perSession.values()].map((s) => s.ceiling / s.prompt);
    expect(line.agentic.session_ceiling_hit_ratio.mean).toBeCloseTo(ceilings.reduce((a, x) => a + x, 0) / ceilings.length, 9);
    expect(line.agentic.session_hit_ratio.mean).toBeLessThanOrEqual(line.agentic.session_ceiling_hit_ratio.mean);
    // Subagents overlap on the server: in trace_0277, two requests of different chains in flight at once (truth times).
    const spans = r.details
      .filter((d) => d.trace_id === "trace_0277")
      .map((d) => {
        const t = served.get(d.request_id);
        return { chain: d.agent_path as string, from: t.received_ms as number, to: t.events_ms.at(-1) as number };
      });
    const overlapping = spans.some((a) => spans.some((b) => a.chain !== b.chain && a.from < b.to && b.from < a.to));
    expect(overlapping).toBe(true);
    expect(line.agentic.subagent_concurrency.max).toBeGreaterThanOrEqual(2);
    // A session's turns in order: each chain's turns start after the previous one's answer ended (truth times).
    const byChain = new Map<string, { turn: number; from: number; to: number }[]>();
    for (const d of r.details) {
      const t = served.get(d.request_id);
      const key = `${d.session}/${d.agent_path}`;
      byChain.set(key, [...(byChain.get(key) ?? []), { turn: d.turn, from: t.received_ms, to: t.events_ms.at(-1) }]);
    }
    for (const list of byChain.values()) {
      list.sort((a, b) => a.turn - b.turn);
      for (let i = 1; i < list.length; i++) expect(list[i]!.from).toBeGreaterThanOrEqual(list[i - 1]!.to);
    }
  }, 120_000);
});

describe("a cache smaller than the sessions' working set", () => {
  test("every request's truth still within its range (eviction predicted); sessions fall below their ceiling", async () => {
    const truth = join(dir, "truth-small.jsonl");
    const url = await mock(truth, 200_000);
    const r = await replay(corpus("small-cache", WITH_SUBAGENTS), [url], []);
    expect(r.code, r.stderr).toBe(0);
    expect(r.line.cache_check).toBe("ok");
    expect([r.line.cache_short_requests, r.line.cache_over_requests]).toEqual([0, 0]);
    expect(r.line.predicted_eviction_tokens).toBeGreaterThan(0);
    const served = new Map(readJsonl(truth).map((t: any) => [t.request_id, t]));
    for (const d of r.details) {
      const t = served.get(d.request_id);
      expect(t.cached_tokens).toBeGreaterThanOrEqual(d.expected_cached_tokens_lower);
      expect(t.cached_tokens).toBeLessThanOrEqual(d.expected_cached_tokens_upper);
    }
    const a = r.line.agentic;
    expect(a.session_hit_ratio.mean).toBeLessThan(a.session_ceiling_hit_ratio.mean - 0.01);
  }, 60_000);
});

describe("a TraceLab runner CSV against the mock", () => {
  test("its rounds replay in order, each cached as its invented blocks say (strict); every prompt dumped at its length", async () => {
    const truth = join(dir, "truth-tracelab.jsonl");
    const url = await mock(truth);
    const dump = join(dir, "tracelab-prompts.jsonl");
    const r = await replay(join(ROOT, "test/fixtures/tracelab/runner.csv"), [url], ["--block-size", "16", "--dump-prompts", dump]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.line.agentic.trace_format).toBe("tracelab");
    expect(r.line.cache_check).toBe("ok");
    const served = new Map(readJsonl(truth).map((t: any) => [t.request_id, t]));
    for (const d of r.details) expect(served.get(d.request_id).cached_tokens).toBe(d.cached_tokens);
    // A later round shares the session's earlier blocks: something was cached, as predicted.
    expect(r.details.some((d) => d.expected_cached_tokens_lower > 0 && d.cached_tokens >= d.expected_cached_tokens_lower)).toBe(true);
    const prompts = readJsonl(dump);
    expect(prompts).toHaveLength(r.details.length);
    for (const p of prompts) expect(p.input_ids).toHaveLength(p.input_length);
  }, 60_000);
});

describe("three mock replicas", () => {
  const urls = async (tag: string) => Promise.all([0, 1, 2].map((i) => mock(join(dir, `truth-${tag}-${i}.jsonl`))));

  test("session routing keeps each session on one replica (routing loss 0); round-robin loses hits", async () => {
    const path = corpus("subagents", WITH_SUBAGENTS);
    const session = await replay(path, await urls("session"), ["--route", "session"]);
    expect(session.code, session.stderr).toBe(0);
    expect(session.line.route).toBe("session");
    expect(session.line.loss_routing_tokens).toBe(0);
    const replicaOf = new Map<number, Set<number>>();
    for (const d of session.details) replicaOf.set(d.session, new Set([...(replicaOf.get(d.session) ?? []), d.replica]));
    expect([...replicaOf.values()].map((s) => s.size)).toEqual([1, 1]);
    const rr = await replay(path, await urls("rr"), ["--route", "round-robin"]);
    expect(rr.code, rr.stderr).toBe(0);
    expect(rr.line.loss_routing_tokens).toBeGreaterThan(0);
    expect(rr.line.cache_check).toBe("ok");
  }, 120_000);
});

describe("replay --analyze of an agentic corpus", () => {
  test("sessions, subagents and the ceiling without a server", async () => {
    const out = join(dir, "analyze.json");
    const r = await runCli(["replay", corpus("analyze", TRACES), "--analyze", "--page-size", "64", "--output-file", out]);
    expect(r.code, r.stderr).toBe(0);
    const a = (await Bun.file(out).json()) as any;
    expect(a.trace_format).toBe("weka");
    expect(a.sessions).toHaveLength(8);
    const t277 = a.sessions.find((s: any) => s.trace_id === "trace_0277");
    expect([t277.requests, t277.subagents, t277.depth]).toEqual([53, 4, 1]);
    // The LRU curve rises to the ceiling at the working set.
    const lru = a.lru.map((l: any) => l.hit_ratio);
    expect([...lru].sort((x: number, y: number) => x - y)).toEqual(lru);
    expect(lru.at(-1)).toBeCloseTo(a.ceiling_hit_ratio, 6);
  });
});
