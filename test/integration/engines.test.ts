/**
 * Engines end to end: the compiled binary against the mock's personalities. --backend auto against SGLang sends the
 * requests --backend sglang sends and writes the same results; llama.cpp gets per-slot warms and flush proofs, its
 * host-RAM cache and a missing --slot-save-path are caught; chat runs with text prompts on every engine.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions, type MockOptions } from "../../src/mock/options.ts";
import { startRecordingProxy } from "../helpers/recording-proxy.ts";
import { readSweepLines } from "../helpers/results.ts";
import { LLAMA2_TOKENIZER, runCli, type CliResult } from "../helpers/run-cli.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-engines-"));
let fileNo = 0;
const mocks: MockServer[] = [];
afterAll(async () => {
  await Promise.all(mocks.map((m) => m.stop()));
});

async function mock(overrides: Partial<MockOptions>): Promise<MockServer> {
  const m = await startMockServer(mockOptions({ port: 0, ttftBaseMs: 1, prefillUsPerToken: 20, itlMs: 1, recordInputs: true, vocabSize: 32000, ...overrides }));
  mocks.push(m);
  return m;
}

interface Run extends CliResult {
  lines: any[];
}

/** One sweep of the binary: small prompts, a results file. */
async function sweep(url: string, args: string[]): Promise<Run> {
  const out = join(dir, `out-${++fileNo}.jsonl`);
  const r = await runCli([
    "--model",
    LLAMA2_TOKENIZER,
    "--base-url",
    url,
    "--num-prompts",
    "8",
    "--total-tokens",
    "400",
    "--output-len",
    "4",
    "--pcts",
    "0,50,90",
    "--max-concurrency",
    "4",
    "--settle",
    "0",
    "--seed",
    "3",
    "--output-file",
    out,
    ...args,
  ]);
  return { ...r, lines: readSweepLines(out) };
}

// Numbers out, and the column padding that depends on their widths (the end-of-sweep table).
const timingFree = (text: string): string => text.replace(/-?\d+(\.\d+)?(e[+-]?\d+)? */g, "N ").replace(/ +/g, " ");

describe("--backend auto (the default) against SGLang", () => {
  test("the same requests, in the same order, and the same results as --backend sglang", async () => {
    const seen: string[][] = [];
    const runs: Run[] = [];
    for (const args of [["--backend", "sglang"], []]) {
      const m = await mock({ pageSize: 16 });
      const proxy = startRecordingProxy(m.url);
      runs.push(await sweep(proxy.url, args));
      // Less the telemetry's scrapes of /metrics, which follow the clock (--scrape-interval).
      seen.push(proxy.requests.filter((r) => !(r.method === "GET" && r.path === "/metrics")).map((r) => `${r.method} ${r.path}`));
      // The flush probe re-sends the start of the prompt that happened to finish last: its ids depend on timing.
      const bodies = m
        .stats()
        .received.map((r) =>
          r.maxNewTokens === 1 && r.inputIds.length === 65 ? "probe" : JSON.stringify([r.inputIds, r.maxNewTokens, r.temperature, r.ignoreEos, r.stream]),
        );
      seen.push(bodies);
      await proxy.stop();
    }
    const [named, detected] = runs as [Run, Run];
    expect(named.code).toBe(0);
    expect(detected.code).toBe(0);
    expect(seen[2]).toEqual(seen[0]); // method and path of every request
    expect(seen[3]).toEqual(seen[1]); // every generation's ids and parameters
    expect(timingFree(detected.stdout)).toBe(timingFree(named.stdout));
    expect(detected.stderr).toContain("Engine: sglang (detected: GET /generate answered 405, /server_info version 0.5.17-mock); requests go to /generate");
    // Every line holds the same keys and the same values but for the measured times and the run's own ids.
    // ...and but for where each run's own server listened and when it started.
    const strip = (l: any) => {
      // ttft_by_tier holds TTFTs too (per serving tier), the shards' self-checks are timings, and so are the
      // timeline's buckets and the steady-state window.
      const { run, run_id, started_at, base_url, hdr, ttft_fit, ttft_model, ttft_by_tier, timeline, steady_state, evidence, ...rest } = l;
      const times = Object.fromEntries(
        Object.entries(rest).filter(
          // The servers' telemetry (server_*: scraped on a timer, naming each run's own server) is timing too.
          ([k]) =>
            !/(_ms|duration|throughput|concurrency|client_|achieved_|server_(telemetry|reconciliation|kv_usage|queue|preemptions))/.test(k) ||
            k === "max_concurrency",
        ),
      );
      // The evidence holds the run's id and the load it achieved (timings); its counts and verdicts are compared.
      times.evidence = { ...evidence, run_ids: null, load: { ...evidence.load, achieved_request_rate: null, achieved_concurrency: null } };
      if (!run) return times;
      const options = { ...run.options, base_url: null, output_file: null };
      const server_info = { ...run.server_info, port: null, startup_time: null };
      return { ...times, run: { ...run, started_at: null, options, server_info, engine: { ...run.engine, source: null, evidence: null } } };
    };
    expect(detected.lines.map(strip)).toEqual(named.lines.map(strip));
    expect(detected.lines[0].backend).toBe("sglang");
    expect(detected.lines[0].run.options.backend).toBe("sglang");
    expect(detected.lines[0].run.engine).toMatchObject({
      name: "sglang",
      source: "detected",
      endpoint: "/generate",
      prompt_encoding: "token_ids",
      cache_slots: null,
    });
    expect(named.lines[0].run.engine).toMatchObject({ name: "sglang", source: "flag" });
  });
});

describe("--backend auto finds each engine", () => {
  for (const [personality, backend, engine, path] of [
    ["vllm", "vllm", "vllm", "/v1/completions"],
    ["llamacpp", "llamacpp", "llama.cpp", "/v1/completions"],
    ["openai", "openai", "openai", "/v1/completions"],
  ] as const) {
    test(personality, async () => {
      const m = await mock({ personality, slots: 4, pageSize: personality === "vllm" ? 16 : 1 });
      // Neither vLLM's reset nor a bare server's flush is assumed: flush only where the engine has one.
      const r = await sweep(m.url, personality === "openai" ? ["--flush", "none", "--pcts", "0"] : ["--verify-cache", "strict"]);
      if (r.code !== 0) console.error(r.stderr);
      expect(r.code).toBe(0);
      expect(r.lines[0].backend).toBe(backend);
      expect(r.lines[0].run.engine).toMatchObject({ name: engine, source: "detected", endpoint: path });
      expect(r.stderr).toContain(`Engine: ${engine} (detected: `);
    });
  }
});

describe("llama.cpp (the mock's llama-server personality)", () => {
  test("4 slots: every slot warmed (pinned), every slot's flush proven, measured requests free; every request hits", async () => {
    const m = await mock({ personality: "llamacpp", slots: 4, prefillUsPerToken: 50 });
    const r = await sweep(m.url, ["--backend", "llamacpp", "--verify-cache", "strict"]);
    if (r.code !== 0) console.error(r.stderr);
    expect(r.code).toBe(0);
    expect(r.lines.map((l) => l.cached_tokens_counts)).toEqual([[[0, 8]], [[200, 8]], [[360, 8]]]);
    expect(r.lines.every((l) => l.cache_check === "ok" && l.flush_verified === true && l.page_size === 1)).toBe(true);
    expect(r.lines[0].run.engine).toMatchObject({ name: "llama.cpp", source: "flag", cache_slots: 4, max_running: 4, flush_gap: null });
    const received = m.stats().received;
    // Preflight's RAM check (3), canary on every slot (4), then per pct: a probe per slot (4), a warm per slot (4, not at 0%), 8 measured.
    const short = received.filter((r) => r.maxNewTokens === 1);
    const warms = short.filter((r) => r.inputIds.length === 200 || r.inputIds.length === 360);
    expect(warms.map((r) => r.idSlot)).toEqual([0, 1, 2, 3, 0, 1, 2, 3]);
    expect(warms.map((r) => r.cachedTokens)).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    const measured = received.filter((r) => r.maxNewTokens === 4);
    expect(measured).toHaveLength(24);
    expect(measured.every((r) => r.idSlot === null)).toBe(true);
    const probes = short.filter((r) => r.inputIds.length === 65);
    expect(probes.map((r) => r.idSlot)).toEqual([0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]); // canary, then 3 probes
    expect(probes.slice(4).every((r) => r.cachedTokens === 0)).toBe(true);
    // TTFT falls as the shared prefix grows.
    expect(r.lines[2].median_ttft_ms).toBeLessThan(r.lines[0].median_ttft_ms);
  });

  test("the host-RAM prompt cache: warned at preflight, every pct unproven, --verify-cache strict exits 4", async () => {
    const m = await mock({ personality: "llamacpp", slots: 2, cacheRam: true });
    const r = await sweep(m.url, ["--verify-cache", "strict", "--pcts", "0,50"]);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain("llama.cpp: after every slot was erased, a prompt the server had seen came back with 63 of 64 tokens cached");
    expect(r.stderr).toContain("start llama-server with --cache-ram 0");
    expect(r.lines.map((l) => [l.flush_verified, l.cache_check])).toEqual([
      [false, "mismatch"],
      [false, "mismatch"],
    ]);
    expect(r.lines[0].run.engine.flush_gap).toContain("host-RAM prompt cache");
  });

  test("no --slot-save-path: exit 1 with the flag named, before any pct", async () => {
    const m = await mock({ personality: "llamacpp", noSlotSavePath: true });
    const r = await sweep(m.url, []);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      "warmbench: error: POST /slots/0?action=erase answered 501: llama-server answers slot actions only when started with --slot-save-path DIR",
    );
    expect(r.lines).toEqual([]);
  });

  test("--flush none sends no erase and no check", async () => {
    const m = await mock({ personality: "llamacpp", noSlotSavePath: true, slots: 2 });
    const r = await sweep(m.url, ["--flush", "none", "--pcts", "50"]);
    expect(r.code).toBe(0);
    expect(m.stats().flushes).toBe(0);
  });

  test("--max-concurrency above the slots is explained; the requests queue and still hit", async () => {
    const m = await mock({ personality: "llamacpp", slots: 2 });
    const r = await sweep(m.url, ["--max-concurrency", "0", "--pcts", "50", "--verify-cache", "strict"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("--max-concurrency 0 (8 at once) is above the server's 2 slot(s): 2 requests run at once and the others wait in its queue");
    expect(m.stats().maxRunning).toBe(8);
    expect(r.lines[0].cached_tokens_counts).toEqual([[200, 8]]);
  });
});

describe("--endpoint chat: text prompts", () => {
  for (const [personality, pageSize] of [
    ["vllm", 1],
    ["vllm", 16],
    ["llamacpp", 1],
    ["sglang", 16],
  ] as const) {
    test(`${personality}, page size ${pageSize}`, async () => {
      const m = await mock({ personality, slots: 4, pageSize, tokenizer: LLAMA2_TOKENIZER });
      const r = await sweep(m.url, ["--endpoint", "chat", "--verify-cache", "strict", ...(personality === "vllm" ? ["--page-size", String(pageSize)] : [])]);
      if (r.code !== 0) console.error(r.stderr);
      expect(r.code).toBe(0);
      const first = r.lines[0];
      expect(first.run.engine).toMatchObject({ endpoint: "/v1/chat/completions", prompt_encoding: "text" });
      expect(r.lines.map((l) => l.prompt_encoding)).toEqual(["text", "text", "text"]);
      expect(r.lines.every((l) => l.cache_check === "ok" && l.completed === 8 && l.total_output === 32)).toBe(true);
      // The chatml head <|im_start|>user\n is shared by every prompt: learned after the flush.
      const head = r.lines[0].prompt_drift.template_head_tokens;
      expect(head).toBe(pageSize === 1 ? 9 : 0);
      for (const l of r.lines.slice(1)) {
        expect(l.prompt_drift.prefix_ids).toBe(l.prefix_len);
        expect(l.prompt_drift.min_shared_tokens).toBeGreaterThan(0);
        expect(l.expected_cached_tokens).toBeGreaterThan(0);
      }
      // The prompts went out as text: the mock saw its chat template around them.
      const measured = m.stats().received.filter((x) => x.maxNewTokens === 4);
      expect(measured.every((x) => x.rid.startsWith("chatcmpl-"))).toBe(true);
    });
  }
});

describe("endpoint and backend combinations", () => {
  test("--backend vllm --endpoint generate: exit 2 before anything is sent", async () => {
    const r = await runCli(["--model", LLAMA2_TOKENIZER, "--backend", "vllm", "--endpoint", "generate", "--base-url", "http://127.0.0.1:9"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("warmbench: error: --endpoint generate: vllm has no SGLang-native /generate endpoint (choose from: completions, chat)");
  });
});
