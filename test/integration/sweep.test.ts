/**
 * The whole job, end to end: the compiled binary run as a process against the mock server, checking what the
 * mock received on the wire and what the binary reported.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { LLAMA2_TOKENIZER, runCli, type CliResult } from "../helpers/run-cli.ts";

const SCRIPT_KEYS = [
  "backend",
  "dataset_name",
  "request_rate",
  "max_concurrency",
  "shared_prefix_pct",
  "prefix_len",
  "suffix_len",
  "total_tokens",
  "num_prompts",
  "output_len",
  "completed",
  "benchmark_duration",
  "total_input",
  "total_output",
  "total_output_retokenized",
  "request_throughput",
  "input_throughput",
  "output_throughput",
  "output_throughput_retokenized",
  "total_throughput",
  "total_throughput_retokenized",
  "mean_ttft_ms",
  "median_ttft_ms",
  "std_ttft_ms",
  "p90_ttft_ms",
  "p99_ttft_ms",
  "mean_tpot_ms",
  "median_tpot_ms",
  "std_tpot_ms",
  "p90_tpot_ms",
  "p99_tpot_ms",
  "mean_itl_ms",
  "median_itl_ms",
  "std_itl_ms",
  "p90_itl_ms",
  "p99_itl_ms",
  "mean_e2e_latency_ms",
  "median_e2e_latency_ms",
  "std_e2e_latency_ms",
  "p99_e2e_latency_ms",
  "concurrency",
];

const PAGE = 16;
const TOTAL = 3000;
const PCTS = [0, 50, 90];
const N = 6;
const OUT_LEN = 8;

let mock: MockServer;
let dir: string;
let run: CliResult;
let lines: any[];
let all: any[];

beforeAll(async () => {
  mock = await startMockServer(
    mockOptions({ port: 0, pageSize: PAGE, prefillUsPerToken: 40, ttftBaseMs: 2, itlMs: 2, serialPrefill: true, recordInputs: true }),
  );
  dir = mkdtempSync(join(tmpdir(), "warmbench-sweep-"));
  run = await runCli([
    "--model",
    LLAMA2_TOKENIZER,
    "--base-url",
    mock.url,
    "--pcts",
    PCTS.join(","),
    "--num-prompts",
    String(N),
    "--total-tokens",
    String(TOTAL),
    "--output-len",
    String(OUT_LEN),
    "--max-concurrency",
    "2",
    "--settle",
    "0",
    "--output-file",
    join(dir, "out.jsonl"),
    "--dump-prompts",
    join(dir, "prompts.jsonl"),
    "--seed",
    "7",
  ]);
  // JSON.parse has no Infinity: the script writes request_rate as Python's bare Infinity.
  lines = readFileSync(join(dir, "out.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l.replace(/"request_rate": ?Infinity/, '"request_rate": "inf"')));
  all = lines;
});

afterAll(async () => {
  await mock.stop();
});

describe("full sweep by the compiled binary against the mock", () => {
  test("exits 0 with one JSONL line per pct holding every key of the script", () => {
    if (run.code !== 0) console.error(run.stderr);
    expect(run.code).toBe(0);
    expect(lines.map((l) => l.shared_prefix_pct)).toEqual(PCTS);
    for (const l of lines) {
      for (const k of SCRIPT_KEYS) expect(l).toHaveProperty(k);
      expect(l.completed).toBe(N);
      expect(l.failed).toBe(0);
      expect(l.total_input).toBe(N * TOTAL);
      expect(l.total_output).toBe(N * OUT_LEN);
      expect(l.prefix_len + l.suffix_len).toBe(TOTAL);
      expect(l.prefix_len).toBe(Math.floor((TOTAL * l.shared_prefix_pct) / 100));
    }
  });

  test("the wire: exact lengths, one identical prefix per pct, distinct suffixes, a prefix-only warm", () => {
    const received = mock.stats().received;
    // Before the first flush only: a canary prompt. Then per pct: one probe after the flush (the canary, later the
    // start of the previous pct's last finished prompt) that must find nothing cached, 1 warm request (when the
    // prefix is not empty), then N measured ones, in order.
    let at = 0;
    let cachedBefore = received[at++]!.inputIds;
    expect(cachedBefore.length).toBe(65);
    for (const pct of PCTS) {
      const prefixLen = Math.floor((TOTAL * pct) / 100);
      const probe = received[at++]!;
      expect(probe.inputIds).toEqual(cachedBefore.slice(0, 65));
      expect(probe.maxNewTokens).toBe(1);
      expect(probe.cachedTokens).toBe(0);
      if (prefixLen > 0) {
        const warm = received[at++]!;
        expect(warm.inputIds.length).toBe(prefixLen);
        expect(warm.maxNewTokens).toBe(1);
        expect(warm.cachedTokens).toBe(0); // the flush really emptied the cache
      }
      const measured = received.slice(at, at + N);
      at += N;
      const prefixes = new Set<string>();
      const suffixes = new Set<string>();
      for (const r of measured) {
        expect(r.inputIds.length).toBe(TOTAL);
        expect(r.maxNewTokens).toBe(OUT_LEN);
        expect(r.temperature).toBe(0);
        expect(r.ignoreEos).toBe(true);
        expect(r.stream).toBe(true);
        prefixes.add(r.inputIds.slice(0, prefixLen).join(","));
        suffixes.add(r.inputIds.slice(prefixLen).join(","));
      }
      expect(prefixes.size).toBe(1);
      expect(suffixes.size).toBe(N);
      // The next probe is the start of one of these prompts: the one that finished last.
      const next = received[at];
      if (next) {
        const from = measured.find((r) => r.inputIds.slice(0, 65).join(",") === next.inputIds.join(","));
        expect(from).toBeDefined();
        cachedBefore = from!.inputIds;
      }
    }
    expect(at).toBe(received.length);
  });

  test("--dump-prompts holds exactly the ids that went on the wire", () => {
    const dumped = readFileSync(join(dir, "prompts.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const measured = mock.stats().received.filter((r) => r.maxNewTokens === OUT_LEN);
    expect(dumped).toHaveLength(PCTS.length * N);
    expect(dumped.map((d) => d.input_ids.join(","))).toEqual(measured.map((r) => r.inputIds.join(",")));
  });

  test("cached tokens equal the page-aligned prefix for every measured request", () => {
    const measured = mock.stats().received.filter((r) => r.maxNewTokens === OUT_LEN);
    PCTS.forEach((pct, k) => {
      const expected = Math.floor(Math.floor((TOTAL * pct) / 100) / PAGE) * PAGE;
      for (const r of measured.slice(k * N, (k + 1) * N)) expect(r.cachedTokens).toBe(expected);
      expect(lines[k].expected_cached_tokens).toBe(expected);
      expect(lines[k].mean_cached_tokens).toBe(expected);
      expect(lines[k].cached_tokens_mismatched).toBe(0);
    });
  });

  test("one line per pct and nothing else; the first carries the run (server info, options without secrets)", () => {
    expect(all).toHaveLength(PCTS.length);
    for (const l of all) expect(l).not.toHaveProperty("type");
    expect(new Set(all.map((l) => l.run_id)).size).toBe(1);
    expect(all[0].run_id).toMatch(/^[0-9a-z]{8}$/);
    expect(all[0].run.server_info.page_size).toBe(PAGE);
    expect(all[0].run.options.num_prompts).toBe(N);
    expect(all[0].run.page_size).toBe(PAGE);
    expect(all[0].run.page_size_source).toBe("server");
    for (const l of all.slice(1)) expect(l).not.toHaveProperty("run");
    // The last line's model covers the whole sweep; each line's ttft_fit is its own pct's share.
    expect(all.at(-1).ttft_model.n).toBe(PCTS.length * N);
    for (const l of all) expect(l.ttft_fit.n).toBe(N);
    // The mock's model: 2 ms + 40 µs per uncached token; queueing behind the serialized prefill adds to it.
    expect(all.at(-1).ttft_model.prefill_us_per_token).toBeGreaterThan(30);
    for (const l of lines) {
      expect(l.cache_check).toBe("ok");
      expect(l.flush_verified).toBe(true); // the probe proves it even at pct 0, where there is no warm
      expect(l.flush_probe_cached_tokens).toBe(0);
      expect(l.flush_attempts).toBe(1);
      expect(typeof l.client_loop_lag_p99_ms).toBe("number");
    }
  });

  test("mean TTFT falls as the shared prefix grows", () => {
    const ttfts = lines.map((l) => l.mean_ttft_ms);
    expect(ttfts[0]).toBeGreaterThan(ttfts[1]);
    expect(ttfts[1]).toBeGreaterThan(ttfts[2]);
  });

  test("the console shows the script's block per pct, and `report` rebuilds it from the JSONL alone", async () => {
    for (const label of ["Serving Benchmark Result", "Successful requests:", "Mean TTFT (ms):", "P99 ITL (ms):", "Median E2E Latency (ms):"]) {
      expect(run.stdout.split(label).length - 1).toBe(PCTS.length);
    }
    expect(run.stdout).toContain(`shared_prefix=50%  prefix_len=1500  suffix_len=1500  total=3000`);
    const report = await runCli(["report", join(dir, "out.jsonl")]);
    expect(report.code).toBe(0);
    expect(report.stdout.trim()).toBe(run.stdout.trim());
  });

  test("the server saw exactly one successful flush per pct, as with the script", () => {
    expect(mock.stats().flushes).toBe(PCTS.length);
  });

  test("logs go to stderr, not stdout", () => {
    expect(run.stderr).toContain("Flushing KV cache");
    expect(run.stdout).not.toContain("Flushing KV cache");
  });
});

describe("large prompts (bodies streamed from shared parts)", () => {
  test("70k-token prompts arrive byte-exact with a fixed content-length", async () => {
    const server = await startMockServer(mockOptions({ port: 0, recordInputs: true, prefillUsPerToken: 0, itlMs: 1 }));
    const dump = join(dir, "large-prompts.jsonl");
    try {
      const r = await runCli([
        "--model",
        LLAMA2_TOKENIZER,
        "--base-url",
        server.url,
        "--pcts",
        "0,95",
        "--num-prompts",
        "3",
        "--total-tokens",
        "70000",
        "--output-len",
        "2",
        "--max-concurrency",
        "3",
        "--settle",
        "0",
        "--dump-prompts",
        dump,
      ]);
      expect(r.code).toBe(0);
      const dumped = readFileSync(dump, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).input_ids.join(","));
      const measured = server
        .stats()
        .received.filter((x) => x.maxNewTokens === 2)
        .map((x) => x.inputIds.join(","));
      // Concurrent requests reach the server in any order.
      expect(measured.sort()).toEqual(dumped.sort());
      const warm = server.stats().received.find((x) => x.inputIds.length === 66500)!;
      expect(warm.maxNewTokens).toBe(1);
    } finally {
      await server.stop();
    }
  });
});
