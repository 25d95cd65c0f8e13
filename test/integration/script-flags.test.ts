/**
 * Command lines the reference script accepts are accepted with the same meaning: --max-concurrency 0 (unlimited),
 * a repeated pct, unambiguous abbreviations and --flag=value.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";
import { readSweepLines } from "../helpers/results.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-script-flags-"));
let mock: MockServer;
let fileNo = 0;

beforeAll(async () => {
  mock = await startMockServer(mockOptions({ port: 0, itlMs: 20, maxRunning: 1000, prefillUsPerToken: 0 }));
});
afterAll(() => mock.stop());

async function run(args: string[]) {
  const out = join(dir, `out-${++fileNo}.jsonl`);
  const r = await runCli(["--model", LLAMA2_TOKENIZER, "--base-url", mock.url, "--settle", "0", "--output-file", out, ...args]);
  if (r.code !== 0) console.error(r.stderr);
  return { ...r, lines: readSweepLines(out) };
}

describe("the script's command lines", () => {
  test("--max-concurrency 0 sends every prompt at once, and is reported as the script does ('not set')", async () => {
    const r = await run(["--max-concurrency", "0", "--pcts", "0", "--num-prompts", "24", "--total-tokens", "50", "--output-len", "10"]);
    expect(r.code).toBe(0);
    // This mock's first run: the most requests it ever had open at once.
    expect(mock.stats().maxInFlight).toBe(24);
    expect(r.lines[0].max_concurrency).toBe(0);
    expect(r.lines[0].completed).toBe(24);
    expect(r.stdout).toMatch(/Max request concurrency:\s+not set/);
  });

  test("--max-concurrency 0 above Bun's 256-per-origin cap: all 300 in flight (relaunched with the cap raised)", async () => {
    const server = await startMockServer(mockOptions({ port: 0, itlMs: 25, maxRunning: 1000, prefillUsPerToken: 0 }));
    try {
      const r = await runCli(
        [
          "--model",
          LLAMA2_TOKENIZER,
          "--base-url",
          server.url,
          "--pcts",
          "0",
          "--total-tokens",
          "50",
          "--output-len",
          "40",
          "--num-prompts",
          "300",
          "--max-concurrency",
          "0",
          "--settle",
          "0",
        ],
        { env: { BUN_CONFIG_MAX_HTTP_REQUESTS: "" } },
      );
      expect(r.code).toBe(0);
      expect(server.stats().maxInFlight).toBe(300);
    } finally {
      await server.stop();
    }
  });

  test("a repeated pct is run again, as the script does", async () => {
    const r = await run(["--pcts", "50,50", "--num-prompts", "2", "--total-tokens", "100", "--output-len", "2"]);
    expect(r.code).toBe(0);
    expect(r.lines.map((l) => l.shared_prefix_pct)).toEqual([50, 50]);
    // Each is its own pct: its own prefix, flushed and warmed.
    expect(r.lines.every((l) => l.cache_check === "ok" && l.flush_verified === true)).toBe(true);
  });

  test("an ambiguous abbreviation is refused naming the candidates, as argparse does", async () => {
    const r = await runCli(["--model", LLAMA2_TOKENIZER, "--base-url", mock.url, "--output", "2"]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('warmbench: error: ambiguous flag "--output" could match --output-len, --output-file');
  });

  test("unambiguous abbreviations and --flag=value work as in argparse", async () => {
    const r = await run(["--num-p", "3", "--total=120", "--output-l", "2", "--pct=0,25", "--max-c", "2"]);
    expect(r.code).toBe(0);
    expect(r.lines.map((l) => [l.shared_prefix_pct, l.num_prompts, l.total_tokens, l.output_len, l.max_concurrency])).toEqual([
      [0, 3, 120, 2, 2],
      [25, 3, 120, 2, 2],
    ]);
  });
});
