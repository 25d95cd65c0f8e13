/**
 * Server telemetry (--scrape-interval) end to end: the compiled binary against the mock in each dialect (SGLang,
 * vLLM, llama.cpp), and routed over three mock replicas. Every line carries each server's series with at least 90 %
 * of the scrapes intended; the servers' counters reconcile exactly with the client's records on a correct mock, and
 * the mock's --fault-metrics-undercount (a cached-token counter that lies) is a named finding with both figures, a
 * failed gate and a compare failure.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions, type MockOptions } from "../../src/mock/options.ts";
import { readJsonl } from "../helpers/results.ts";
import { LLAMA2_TOKENIZER, runCli, type CliResult } from "../helpers/run-cli.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-telemetry-"));
let fileNo = 0;
const mocks: MockServer[] = [];
afterAll(async () => {
  await Promise.all(mocks.map((m) => m.stop()));
});

async function mock(overrides: Partial<MockOptions>): Promise<MockServer> {
  // Slow enough answers (16 tokens, 15 ms apart) that a point lasts over a second: several timer scrapes in each.
  const m = await startMockServer(mockOptions({ port: 0, ttftBaseMs: 1, prefillUsPerToken: 20, itlMs: 15, vocabSize: 32000, cacheTokens: 4000, ...overrides }));
  mocks.push(m);
  return m;
}

interface Run extends CliResult {
  lines: any[];
  file: string;
}

async function sweep(url: string, args: string[]): Promise<Run> {
  const out = join(dir, `out-${++fileNo}.jsonl`);
  const r = await runCli([
    "--model",
    LLAMA2_TOKENIZER,
    "--base-url",
    url,
    "--num-prompts",
    "24",
    "--total-tokens",
    "300",
    "--output-len",
    "16",
    "--pcts",
    "0,80",
    "--max-concurrency",
    "4",
    "--settle",
    "0",
    "--seed",
    "5",
    "--scrape-interval",
    "250ms",
    "--output-file",
    out,
    ...args,
  ]);
  return { ...r, file: out, lines: r.code === 2 ? [] : readJsonl(out, { validate: true }) };
}

function expectSeries(line: any, servers: number, dialect: string): void {
  const t = line.server_telemetry;
  expect(t.interval_ms).toBe(250);
  expect(t.replicas).toHaveLength(servers);
  expect(t.scrapes_ok / t.scrapes_intended).toBeGreaterThanOrEqual(0.9);
  expect(t.buckets).toBe(line.timeline.buckets);
  expect(t.bucket_s).toBe(line.timeline.bucket_s);
  for (const r of t.replicas) {
    expect(r.dialect).toBe(dialect);
    expect(r.scrapes_failed).toBe(0);
    expect(r.running.length).toBeGreaterThanOrEqual(t.buckets);
  }
  expect(line.evidence.samples.telemetry).toBe(t.scrapes_ok);
}

describe("each dialect, one correct server", () => {
  for (const [personality, backend, counters] of [
    // The mock labels its cached tokens by tier as SGLang does and reports each request's breakdown: a row per tier.
    ["sglang", "sglang", ["prompt_tokens", "cached_tokens", "requests", "cached_tokens_device"]],
    ["vllm", "vllm", ["prompt_tokens", "cached_tokens", "requests"]],
    ["llamacpp", "llamacpp", ["prompt_tokens", "cached_tokens"]],
  ] as const) {
    test(`${personality}: series in every line, the counters reconcile exactly`, async () => {
      const m = await mock({ personality, slots: 4, pageSize: personality === "vllm" ? 16 : 1 });
      const r = await sweep(m.url, ["--backend", backend]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.lines).toHaveLength(2);
      for (const line of r.lines) {
        expectSeries(line, 1, personality);
        expect(line.server_reconciliation.map((x: any) => x.counter)).toEqual(counters);
        for (const row of line.server_reconciliation) expect([row.counter, row.server]).toEqual([row.counter, row.client]);
        expect(line.server_counters_disagree).toBe(0);
        expect(line.server_reconciliation.find((x: any) => x.counter === "prompt_tokens").client).toBe(24 * 300);
      }
      // The shared prefix is cached: the server's and the client's cached tokens are the same, and not none.
      expect(r.lines[1].server_reconciliation.find((x: any) => x.counter === "cached_tokens").server).toBeGreaterThan(0);
      if (personality === "llamacpp") {
        expect(r.lines[0].server_kv_usage_peak).toBeNull();
        expect(r.lines[0].server_preemptions_per_request).toBeNull();
      } else {
        expect(r.lines[1].server_kv_usage_peak).toBeGreaterThan(0);
        expect(r.lines[1].server_kv_usage_peak).toBeLessThanOrEqual(1);
        expect(r.lines[1].server_preemptions_per_request).toBe(0);
      }
      expect(r.lines[0].server_queue_mean).toBeGreaterThanOrEqual(0);
      expect(r.stderr).not.toContain("server_counters_disagree");
    });
  }
});

describe("a server whose cached-token counter lies", () => {
  test("--fault-metrics-undercount: server_counters_disagree, with both figures, in the line and on the console", async () => {
    const m = await mock({ faultMetricsUndercount: 50 });
    const r = await sweep(m.url, ["--backend", "sglang", "--pcts", "80"]);
    expect(r.code, r.stderr).toBe(0);
    const line = r.lines[0];
    // The undercount is the device tier's series: the total and that tier both disagree.
    expect(line.server_counters_disagree).toBe(2);
    expect(line.server_reconciliation.filter((x: any) => !x.agrees).map((x: any) => x.counter)).toEqual(["cached_tokens", "cached_tokens_device"]);
    const row = line.server_reconciliation.find((x: any) => !x.agrees);
    expect(row.server).toBeLessThan(row.client);
    expect(row.server).toBeGreaterThan(0);
    expect(r.stderr).toContain(
      `server_counters_disagree: cached_tokens on ${m.url}: the server's /metrics counted ${row.server}, the client saw ${row.client}`,
    );
    // compare fails the increase against the same workload on a correct server (a count of things gone wrong).
    const correct = await sweep((await mock({})).url, ["--backend", "sglang", "--pcts", "80"]);
    expect(correct.lines[0].server_counters_disagree).toBe(0);
    const cmp = await runCli(["compare", correct.file, r.file]);
    expect(cmp.code, cmp.stdout + cmp.stderr).toBe(7);
    expect(cmp.stdout + cmp.stderr).toContain("server_counters_disagree");
    // A gate on it fails (exit 6), the line still written.
    const gated = await sweep(m.url, ["--backend", "sglang", "--pcts", "80", "--gate", "server_counters_disagree==0"]);
    expect(gated.code).toBe(6);
    expect(gated.lines[0].gates[0]).toMatchObject({ expr: "server_counters_disagree==0", value: 2, pass: false });
  });
});

describe("a cache in two tiers (HiCache)", () => {
  test("each tier's cached tokens reconcile apart: the host tier's hits the server counted are the ones the client saw", async () => {
    // A device cache smaller than the four prefixes: evicted pages move to the host tier, whose hits are labelled apart.
    const m = await mock({ personality: "sglang", pageSize: 16, cacheTokens: 600, hostCacheTokens: 20000 });
    const r = await sweep(m.url, ["--backend", "sglang", "--pcts", "80", "--working-set", "4"]);
    expect(r.code, r.stderr).toBe(0);
    const rows = new Map(r.lines[0].server_reconciliation.map((x: any) => [x.counter, x]));
    const host = rows.get("cached_tokens_host") as any;
    expect(host.client).toBeGreaterThan(0);
    expect([host.server, host.agrees]).toEqual([host.client, true]);
    expect((rows.get("cached_tokens_device") as any).agrees).toBe(true);
    expect(r.lines[0].server_counters_disagree).toBe(0);
  });
});

describe("three mock replicas, client-routed", () => {
  test("per-replica series and reconciliation, each against the requests that replica served", async () => {
    const urls: string[] = [];
    for (let i = 0; i < 3; i++) urls.push((await mock({})).url);
    const r = await sweep(urls.join(","), ["--backend", "sglang", "--route", "round-robin", "--pcts", "80"]);
    expect(r.code, r.stderr).toBe(0);
    const line = r.lines[0];
    expectSeries(line, 3, "sglang");
    expect(line.server_telemetry.replicas.map((x: any) => x.url)).toEqual(urls);
    const rows = line.server_reconciliation;
    expect(rows.map((x: any) => x.replica)).toEqual([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]);
    expect(rows.every((x: any) => x.agrees)).toBe(true);
    // Round-robin: each replica served a third of the 24 requests.
    expect(rows.filter((x: any) => x.counter === "requests").map((x: any) => x.client)).toEqual([8, 8, 8]);
  });
});

describe("--scrape-all", () => {
  test("keeps the families the server's dialect does not read, each summed, at the point's last scrape", async () => {
    const m = await mock({});
    const all = await sweep(m.url, ["--backend", "sglang", "--pcts", "0", "--scrape-all"]);
    expect(all.code, all.stderr).toBe(0);
    const kept = all.lines[0].server_telemetry.replicas[0].unknown_families;
    // The SGLang mock serves vLLM's names beside its own: those are the families SGLang's dialect does not read.
    expect(Object.keys(kept).sort()).toEqual([
      "vllm:generation_tokens_total",
      "vllm:kv_cache_usage_perc",
      "vllm:num_preemptions_total",
      "vllm:num_requests_running",
      "vllm:num_requests_waiting",
      "vllm:prefix_cache_hits_total",
      "vllm:prefix_cache_queries_total",
      "vllm:prompt_tokens_total",
      "vllm:request_success_total",
    ]);
    expect(kept["vllm:prompt_tokens_total"]).toBeGreaterThanOrEqual(24 * 300);
    const plain = await sweep(m.url, ["--backend", "sglang", "--pcts", "0"]);
    expect("unknown_families" in plain.lines[0].server_telemetry.replicas[0]).toBe(false);
  });
});

describe("merge", () => {
  test("the union's KV peak is the largest, its queue the window-weighted mean, disagreements add up; preemptions unknown", async () => {
    const m = await mock({ personality: "sglang", pageSize: 16 });
    const a = await sweep(m.url, ["--backend", "sglang", "--pcts", "80", "--max-concurrency", "2"]);
    const b = await sweep(m.url, ["--backend", "sglang", "--pcts", "80", "--max-concurrency", "6"]);
    expect([a.code, b.code]).toEqual([0, 0]);
    const out = join(dir, `merged-${++fileNo}.jsonl`);
    const r = await runCli(["merge", a.file, b.file, "-o", out]);
    expect(r.code, r.stderr).toBe(0);
    const [merged] = readJsonl(out, { validate: true });
    const [x, y] = [a.lines[0], b.lines[0]];
    expect(merged.server_kv_usage_peak).toBe(Math.max(x.server_kv_usage_peak, y.server_kv_usage_peak));
    const weighted = (x.server_queue_mean * x.benchmark_duration + y.server_queue_mean * y.benchmark_duration) / (x.benchmark_duration + y.benchmark_duration);
    expect(merged.server_queue_mean).toBeCloseTo(weighted, 9);
    expect(merged.server_counters_disagree).toBe(x.server_counters_disagree + y.server_counters_disagree);
    expect(merged.server_preemptions_per_request).toBeNull();
    expect(merged.server_reconciliation).toBeNull();
  });
});

describe("multi-turn rounds", () => {
  async function multiturn(url: string, args: string[]): Promise<Run> {
    const out = join(dir, `rounds-${++fileNo}.jsonl`);
    const r = await runCli([
      "multiturn",
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      url,
      "--backend",
      "sglang",
      "--num-clients",
      "4",
      "--num-rounds",
      "3",
      "--shared-system-tokens",
      "32",
      "--turn-tokens",
      "64",
      "--output-len",
      "24",
      "--settle",
      "0",
      "--scrape-interval",
      "250ms",
      "--output-file",
      out,
      ...args,
    ]);
    return { ...r, file: out, lines: r.code === 2 ? [] : readJsonl(out, { validate: true }) };
  }

  test("with the barrier: every round carries its series and its counters reconcile exactly with its turns", async () => {
    const m = await mock({ personality: "sglang", pageSize: 16 });
    const r = await multiturn(m.url, ["--round-barrier"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.lines.map((l) => l.round)).toEqual([0, 1, 2]);
    for (const line of r.lines) {
      expectSeries(line, 1, "sglang");
      expect(line.server_counters_disagree).toBe(0);
      const rows = new Map(line.server_reconciliation.map((x: any) => [x.counter, x]));
      for (const row of rows.values()) expect([(row as any).counter, (row as any).server]).toEqual([(row as any).counter, (row as any).client]);
      // Each round's window holds its own four turns, not the warm's or another round's.
      expect((rows.get("requests") as any).client).toBe(4);
      // Round r's prompt: the system prompt, r answers and turns before it, and its own turn.
      expect((rows.get("prompt_tokens") as any).client).toBe(4 * (32 + 64 + line.round * (24 + 64)));
    }
    expect((r.lines[2].server_reconciliation.find((x: any) => x.counter === "cached_tokens") as any).server).toBeGreaterThan(0);
  });

  test("without the barrier: series in every round, the reconciliation null (the rounds overlap)", async () => {
    const m = await mock({ personality: "sglang", pageSize: 16 });
    const r = await multiturn(m.url, []);
    expect(r.code, r.stderr).toBe(0);
    for (const line of r.lines) {
      expect(line.server_telemetry.scrapes_ok).toBeGreaterThanOrEqual(2);
      expect(line.server_reconciliation).toBeNull();
      expect(line.server_counters_disagree).toBeNull();
    }
  });
});

describe("--scrape-interval", () => {
  test("0: no telemetry keys; under 250ms: refused before anything is sent (exit 2)", async () => {
    const m = await mock({});
    const off = await sweep(m.url, ["--backend", "sglang", "--pcts", "0", "--scrape-interval", "0"]);
    expect(off.code, off.stderr).toBe(0);
    expect("server_telemetry" in off.lines[0]).toBe(false);
    const bad = await sweep(m.url, ["--backend", "sglang", "--pcts", "0", "--scrape-interval", "100ms"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--scrape-interval 100ms: at least 250ms");
  });
});
