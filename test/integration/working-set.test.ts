/**
 * The sweep's --working-set against the mock's cache capacity: K shared prefixes in rotation hit as expected while
 * K x prefix fits the device, and fall off at the configured capacity (the knee); a host tier wins them back as host
 * hits. K = 1 sends exactly the script's prompts.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer } from "../../src/mock/server.ts";
import { mockOptions, type MockOptions } from "../../src/mock/options.ts";
import { buildPrompts, promptIds } from "../../src/workload/prompts.ts";
import { PyRandom } from "../../src/workload/rng.ts";
import { loadTokenizer } from "../../src/workload/tokenizer.ts";
import { LLAMA2_TOKENIZER, runCli, type CliResult } from "../helpers/run-cli.ts";
import { readSweepLines } from "../helpers/results.ts";
import { schemaProblems } from "../helpers/schema.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-ws-"));
let fileNo = 0;
const CAPACITY = 10_000;
const PREFILL_US = 20;

async function sweep(mock: Partial<MockOptions>, args: string[]): Promise<CliResult & { lines: any[]; received: number[][] }> {
  const server = await startMockServer(
    mockOptions({ port: 0, pageSize: 16, ttftBaseMs: 1, prefillUsPerToken: PREFILL_US, itlMs: 1, recordInputs: true, ...mock }),
  );
  const out = join(dir, `ws-${++fileNo}.jsonl`);
  try {
    const r = await runCli([
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      server.url,
      "--total-tokens",
      "1000",
      "--num-prompts",
      "16",
      "--output-len",
      "3",
      "--max-concurrency",
      "1",
      "--settle",
      "0",
      "--output-file",
      out,
      ...args,
    ]);
    return { ...r, lines: readSweepLines(out), received: server.stats().received.map((q) => q.inputIds) };
  } finally {
    await server.stop();
  }
}

describe("a working-set sweep across the cache capacity", () => {
  test("hits as expected while K x prefix fits, eviction from the first K over the capacity, and TTFT jumps there", async () => {
    const r = await sweep({ cacheTokens: CAPACITY }, ["--pcts", "90", "--working-set", "2,4,8,16,32"]);
    if (r.code !== 0) console.error(r.stderr);
    expect(r.code).toBe(0);
    expect(r.lines.map((l) => l.working_set)).toEqual([2, 4, 8, 16, 32]);
    for (const l of r.lines) {
      expect(schemaProblems(l)).toEqual([]);
      expect(l.working_set_tokens).toBe(l.working_set * 900);
      expect(l.cache_capacity_tokens).toBe(CAPACITY);
      expect(l.working_set_fits).toBe(l.working_set_tokens <= CAPACITY);
    }
    // The knee: the first point whose hits fall below expected is the first over the configured capacity.
    const knee = r.lines.findIndex((l) => l.eviction === true);
    expect(knee).toBe(r.lines.findIndex((l) => l.working_set_fits === false));
    for (const l of r.lines.slice(0, knee)) {
      expect(l.observed_hit_ratio).toBe(l.expected_hit_ratio);
      expect(l.cache_shortfall_requests).toBe(0);
    }
    for (const l of r.lines.slice(knee)) {
      expect(l.cache_shortfall_requests).toBe(16);
      expect(l.observed_hit_ratio).toBeLessThan(l.expected_hit_ratio / 2);
    }
    // Each of the 16 requests misses ~900 tokens at 20 µs each over the knee: 18 ms more, far above the noise floor.
    expect(r.lines[knee].mean_ttft_ms - r.lines[knee - 1].mean_ttft_ms).toBeGreaterThan((900 * PREFILL_US) / 1000 / 2);
    expect(r.stdout).toContain("Working set fits the device:             NO: over capacity");
  });

  test("a host tier serves the evicted prefixes: no shortfall, hits reported from the host", async () => {
    const r = await sweep({ cacheTokens: CAPACITY, hostCacheTokens: 100_000, hostLoadUsPerToken: 1 }, ["--pcts", "90", "--working-set", "16"]);
    expect(r.code).toBe(0);
    const [l] = r.lines;
    expect(schemaProblems(l)).toEqual([]);
    expect(l.host_cache_capacity_tokens).toBe(100_000);
    expect(l.eviction).toBe(false);
    expect(l.cached_tokens_by_tier.host).toBeGreaterThan(0);
    expect(l.ttft_by_tier.host.requests).toBeGreaterThan(0);
    expect(r.stdout).toContain("Cached tokens device / host / storage:");
  });

  test("K = 1 sends the script's prompts; K = 2 draws two prefixes first and rotates them", async () => {
    const tokenizer = await loadTokenizer(LLAMA2_TOKENIZER, { revision: "main" });
    for (const k of [1, 2]) {
      const r = await sweep({}, ["--pcts", "50", "--working-set", String(k), "--num-prompts", "4", "--verify-cache", "off"]);
      expect(r.code).toBe(0);
      const set = buildPrompts({ population: tokenizer.population, totalTokens: 1000, pct: 50, numPrompts: 4, rng: new PyRandom(42n), workingSet: k });
      const measured = r.received.filter((ids) => ids.length === 1000);
      expect(measured.map((ids) => ids.join(","))).toEqual([0, 1, 2, 3].map((i) => Array.from(promptIds(set, i)).join(",")));
      expect(new Set(measured.map((ids) => ids.slice(0, 500).join(","))).size).toBe(k);
    }
  });
});
