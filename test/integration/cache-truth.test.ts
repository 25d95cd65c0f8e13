/**
 * Cache truth end to end: the compiled binary against the mock, on both backends, with a healthy cache, a lying
 * flush, an evicting cache, and the vLLM flush endpoint's failure modes.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer } from "../../src/mock/server.ts";
import { mockOptions, type MockOptions } from "../../src/mock/options.ts";
import { LLAMA2_TOKENIZER, runCli, type CliResult } from "../helpers/run-cli.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-cache-"));
let fileNo = 0;

interface Sweep extends CliResult {
  pcts: any[];
  summary: any;
  mockStats: ReturnType<Awaited<ReturnType<typeof startMockServer>>["stats"]>;
}

/** Runs one sweep of the binary against a fresh in-process mock. */
async function sweep(mock: Partial<MockOptions>, args: string[]): Promise<Sweep> {
  const server = await startMockServer(mockOptions({ port: 0, ttftBaseMs: 1, prefillUsPerToken: 1, itlMs: 1, ...mock }));
  const out = join(dir, `out-${++fileNo}.jsonl`);
  try {
    const r = await runCli([
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      server.url,
      "--num-prompts",
      "4",
      "--total-tokens",
      "1000",
      "--output-len",
      "4",
      "--max-concurrency",
      "2",
      "--settle",
      "0",
      "--output-file",
      out,
      ...args,
    ]);
    let lines: any[] = [];
    try {
      lines = readFileSync(out, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l.replace(/: Infinity/, ": null")));
    } catch {
      // no output file: the run failed before the first line
    }
    // The last pct line's ttft_model is the whole sweep's.
    return { ...r, pcts: lines, summary: lines.at(-1), mockStats: server.stats() };
  } finally {
    await server.stop();
  }
}

const expectedCached = (pct: number, page: number) => Math.floor(Math.floor((1000 * pct) / 100) / page) * page;

describe("a healthy cache: expected == observed at every pct, on both backends", () => {
  for (const backend of ["sglang", "vllm"]) {
    test(backend, async () => {
      const r = await sweep({ pageSize: 16 }, ["--backend", backend, "--pcts", "0,30,75,99", "--verify-cache", "strict"]);
      if (r.code !== 0) console.error(r.stderr);
      expect(r.code).toBe(0);
      expect(r.pcts.map((l) => l.shared_prefix_pct)).toEqual([0, 30, 75, 99]);
      for (const l of r.pcts) {
        expect(l.backend).toBe(backend);
        expect(l.completed).toBe(4);
        expect(l.expected_cached_tokens).toBe(expectedCached(l.shared_prefix_pct, 16));
        expect(l.min_cached_tokens).toBe(l.expected_cached_tokens);
        expect(l.max_cached_tokens).toBe(l.expected_cached_tokens);
        expect(l.cached_tokens_mismatched).toBe(0);
        expect(l.cache_check).toBe("ok");
        expect(l.flush_verified).toBe(true);
        expect(l.server_cache_hit_rate).toBeCloseTo(l.expected_cached_tokens / 1000, 6);
      }
      if (backend === "vllm") {
        expect(r.mockStats.completionsRequests).toBeGreaterThan(0);
        expect(r.mockStats.generateRequests).toBe(0);
      } else {
        expect(r.mockStats.completionsRequests).toBe(0);
      }
    });
  }
});

describe("a lying flush is detected", () => {
  test("warn: every pct says so, the exit code is unchanged", async () => {
    const r = await sweep({ flushLies: true }, ["--pcts", "0,50"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/cache check \(0%\): the flush did not empty the cache: a probe of a sequence cached before it found 64 tokens cached after it/);
    for (const l of r.pcts) {
      expect(l.flush_verified).toBe(false);
      expect(l.cache_check).toBe("mismatch");
    }
    expect(r.stdout).toContain("Flush verified (probe found 0 cached):   NO");
  });

  test("strict: exit code 4", async () => {
    const r = await sweep({ flushLies: true }, ["--pcts", "50", "--verify-cache", "strict"]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/--verify-cache strict: the cache check failed for 1 pct\(s\): exit code 4/);
    expect(r.pcts).toHaveLength(1); // measured and written all the same
  });
});

describe("an evicting cache is judged by the cache model", () => {
  test("a correct cache smaller than the prefix: requests miss part of it, and the model expects that (strict passes)", async () => {
    const r = await sweep({ cacheTokens: 400 }, ["--pcts", "90", "--verify-cache", "strict"]);
    expect(r.code).toBe(0);
    const [l] = r.pcts;
    expect(l.expected_cached_tokens).toBe(900);
    expect(l.max_cached_tokens).toBeLessThanOrEqual(400);
    expect(l.cache_check).toBe("ok");
    expect(l.cached_tokens_mismatched).toBe(0);
  });

  test("a cache that drops hits it must have had fails strict (exit 4), and within --cache-tolerance it passes", async () => {
    const forget = { faultForgetEvery: 2 };
    const r = await sweep(forget, ["--pcts", "90", "--verify-cache", "strict"]);
    expect(r.code).toBe(4);
    const [l] = r.pcts;
    expect(l.cache_check).toBe("mismatch");
    expect(l.cached_tokens_mismatched).toBe(2);
    expect(r.stderr).toMatch(/2\/4 requests reported cached tokens other than the range each prompt allows/);
    const tolerant = await sweep(forget, ["--pcts", "90", "--verify-cache", "strict", "--cache-tolerance", "50%"]);
    expect(tolerant.code).toBe(0);
  });
});

describe("TTFT model", () => {
  test("the fitted prefill cost matches the mock's configured µs per token within 5%", async () => {
    const r = await sweep({ prefillUsPerToken: 50, ttftBaseMs: 3 }, [
      "--pcts",
      "0,50,90",
      "--total-tokens",
      "4000",
      "--max-concurrency",
      "1",
      "--num-prompts",
      "4",
    ]);
    expect(r.code).toBe(0);
    const fit = r.summary.ttft_model;
    expect(fit.n).toBe(12);
    expect(fit.prefill_us_per_token).toBeGreaterThan(47.5);
    expect(fit.prefill_us_per_token).toBeLessThan(52.5);
    expect(fit.fixed_ms).toBeGreaterThan(2);
    expect(fit.r2).toBeGreaterThan(0.95);
    expect(r.stdout).toContain("Prefill cost (µs/uncached token):");
  });
});

describe("flushing per backend", () => {
  test("vLLM without dev mode: a clear message, exit 1", async () => {
    const r = await sweep({ noDevMode: true }, ["--backend", "vllm", "--pcts", "0"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("POST /reset_prefix_cache answered 404: the server needs VLLM_SERVER_DEV_MODE=1");
  });

  test("vLLM answering success:false is retried", async () => {
    const r = await sweep({ flushFailFirst: 2 }, ["--backend", "vllm", "--pcts", "0,50"]);
    expect(r.code).toBe(0);
    expect(r.pcts[0].flush_attempts).toBeGreaterThanOrEqual(3);
  });

  test("--flush none: no flush, a warning, flushed: false", async () => {
    const r = await sweep({}, ["--flush", "none", "--pcts", "0,50"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("--flush none: the cache is NOT flushed");
    expect(r.mockStats.flushes).toBe(0);
    for (const l of r.pcts) {
      expect(l.flushed).toBe(false);
      expect(l.flush_verified).toBeNull();
    }
  });
});
