/**
 * `warmbench compare` through the compiled binary, on runs against mocks: identical mocks pass the default limits,
 * a mock 20 % slower per token fails them naming mean_itl_ms (exit 7), another tokenizer is refused naming the
 * fingerprint field (exit 2), and --force compares anyway, marked.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { LLAMA2_TOKENIZER, QWEN3_TOKENIZER, runCli, type CliResult } from "../helpers/run-cli.ts";
import { readSweepLines } from "../helpers/results.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-compare-"));
const ITL_MS = 20;
/**
 * Latencies well above this box's scheduling noise (TTFT ~150 ms, 30 tokens 20 ms apart, all 8 prompts at once), so
 * the default limits hold for identical mocks; the mean ITL averages 29 gaps per request, so a 20 % slower step shows
 * as ~+20 %.
 */
const mockWith = (itlMs: number) => startMockServer(mockOptions({ port: 0, pageSize: 16, itlMs, ttftBaseMs: 150, prefillUsPerToken: 10 }));
const mocks: MockServer[] = [];

async function sweep(mock: MockServer, name: string, tokenizer = LLAMA2_TOKENIZER): Promise<string> {
  const out = join(dir, `${name}.jsonl`);
  const r = await runCli([
    "--model",
    tokenizer,
    "--base-url",
    mock.url,
    "--pcts",
    "0,80",
    "--num-prompts",
    "8",
    "--total-tokens",
    "2000",
    "--output-len",
    "30",
    "--max-concurrency",
    "8",
    "--settle",
    "0",
    "--output-file",
    out,
  ]);
  if (r.code !== 0) throw new Error(`run ${name} exited ${r.code}: ${r.stderr}`);
  return out;
}

let base: string;
let same: string;
let slow: string;
let qwen: string;

beforeAll(async () => {
  for (const itl of [ITL_MS, ITL_MS, ITL_MS * 1.2]) mocks.push(await mockWith(itl));
  // One at a time: runs side by side on a 2-core box would measure each other.
  base = await sweep(mocks[0]!, "base");
  same = await sweep(mocks[1]!, "same");
  slow = await sweep(mocks[2]!, "slow");
  qwen = await sweep(mocks[0]!, "qwen", QWEN3_TOKENIZER);
});

afterAll(async () => {
  for (const m of mocks) await m.stop();
});

const compare = (args: string[], env: Record<string, string> = {}): Promise<CliResult> => runCli(["compare", ...args], { env });

describe("compare", () => {
  test("every pct line carries the workload fingerprint", () => {
    const [line] = readSweepLines(base);
    expect(line.workload).toEqual({
      backend: "sglang",
      tokenizer_sha256: new Bun.CryptoHasher("sha256").update(readFileSync(LLAMA2_TOKENIZER)).digest("hex"),
      vocab_size: 32000,
      total_tokens: 2000,
      output_len: 30,
      ignore_eos: true,
      num_prompts: 8,
      max_concurrency: 8,
      seed: "42",
      shared_prefix_pct: 0,
      prompt_ids_hash: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    // The same seed and tokenizer draw the same prompts, in both runs and at both pcts apart.
    const [a0, a80] = readSweepLines(base);
    const [b0, b80] = readSweepLines(same);
    expect(b0.workload).toEqual(a0.workload);
    expect(b80.workload).toEqual(a80.workload);
    expect(a80.workload.prompt_ids_hash).not.toBe(a0.workload.prompt_ids_hash);
  });

  test("two runs against identical mocks pass the default limits", async () => {
    const r = await compare([base, same]);
    if (r.code !== 0) console.error(r.stdout, r.stderr);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("No regression beyond the limits (2 lines compared).");
    expect(r.stdout).toMatch(/^ 0%  mean_itl_ms +line .* 5% +(ok|better|same)$/m);
    // Percentiles come from the HDR histograms.
    expect(r.stdout).toMatch(/^80%  p999_ttft_ms +hdr /m);
  });

  test("a limit on a percentile compare reads from the HDR histograms (p999, p50) is judged on them, not failed as absent from the line", async () => {
    const r = await compare([base, same, "--max-regress", "p999_ttft_ms=1000%,p50_itl_ms=1000%,p90_e2e_latency_ms=1000%"]);
    if (r.code !== 0) console.error(r.stdout, r.stderr);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain("metric_absent");
    expect(r.stdout).toMatch(/^80%  p999_ttft_ms +hdr .* 1000% +(ok|better|same|worse)$/m);
    expect(r.stdout).toMatch(/^80%  p90_e2e_latency_ms +hdr .* 1000% +(ok|better|same|worse)$/m);
    // p50 is the line's median under the name compare gives it.
    expect(r.stdout).toMatch(/^80%  p50_itl_ms +line .* 1000% +(ok|better|same|worse)$/m);
  });

  test("a mock 20 % slower per token is a regression naming mean_itl_ms: exit 7", async () => {
    const summary = join(dir, "step-summary.md");
    const md = join(dir, "compare.md");
    const r = await compare([base, slow, "--md", md], { GITHUB_STEP_SUMMARY: summary });
    expect(r.code).toBe(7);
    const row = /^ 0%  mean_itl_ms +line +(\d+\.\d\d) +(\d+\.\d\d) +\+\d+\.\d\d +\+(\d+\.\d)% +base +5% +REGRESSED$/m.exec(r.stdout);
    expect(row).not.toBeNull();
    // The mock's step went from 20 to 24 ms: compare sees about that.
    expect(Number(row![3])).toBeGreaterThan(10);
    expect(Number(row![3])).toBeLessThan(35);
    expect(r.stderr).toMatch(/mean_itl_ms at 0%: \+\d+\.\d% \(limit 5%\)/);
    expect(r.stderr).toContain("exit code 7");
    // The Markdown holds the same table, and a compare appends it to the job summary.
    const markdown = readFileSync(md, "utf8");
    expect(markdown).toMatch(/\| 0% \| mean\\_itl\\_ms \| line \| \d+\.\d\d \| \d+\.\d\d \| \+\d+\.\d\d \| \+\d+\.\d% \| base \| 5% \| REGRESSED \|/);
    expect(readFileSync(summary, "utf8")).toBe(markdown);
  });

  test("--max-regress adds to the defaults per metric; --only narrows to the metrics it names", async () => {
    // 0.3 let one limit switch the others off: output throughput fell 15 % and compare passed.
    const added = await compare([base, slow, "--max-regress", "mean_itl_ms=30%"]);
    expect(added.stdout).toMatch(/^ 0%  mean_itl_ms .* 30% +ok$/m);
    expect(added.stdout).toMatch(/^ 0%  output_throughput .* 5% +(REGRESSED|ok)$/m);
    const r = await compare([base, slow, "--max-regress", "mean_itl_ms=30%", "--only", "mean_itl_ms,p99_ttft_ms"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ 0%  mean_itl_ms .* 30% +ok$/m);
    expect(r.stdout).toMatch(/^ 0%  p99_ttft_ms +line .* 25% +(ok|better|same)$/m);
    expect(r.stdout).not.toContain("output_throughput");
    const twice = await compare([base, slow, "--max-regress", "p99_ttft_ms=10%,p99_ttft_ms=90%"]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain("--max-regress: p99_ttft_ms is named twice");
    const bare = await compare([base, slow, "--max-regress", "p99_ttft_ms=10"]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain("write the percent sign (p99_ttft_ms=10%)");
    const bad = await compare([base, slow, "--max-regress", "ttft_p99=5%"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--max-regress "ttft_p99=5%": compare knows no metric ttft_p99');
  });

  test("runs with another tokenizer are refused, naming the field", async () => {
    const r = await compare([base, qwen]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /compare: refused: 0%: the workloads differ in tokenizer_sha256 \(base [0-9a-f]{12}…, new [0-9a-f]{12}…\); also vocab_size, prompt_ids_hash/,
    );
    expect(r.stderr).toContain("--force compares anyway");
    expect(r.stdout).toBe("");
  });

  test("--force compares them anyway, marked in the output", async () => {
    const r = await compare([base, qwen, "--force", "--only", "mean_ttft_ms,mean_itl_ms", "--max-regress", "mean_itl_ms=1000%,mean_ttft_ms=1000%"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ 0%\*  mean_ttft_ms/m);
    expect(r.stdout).toContain("* compared with --force although the workloads differ: 0%: the workloads differ in tokenizer_sha256");
  });

  test("input problems are usage errors", async () => {
    expect((await compare([base])).stderr).toContain("compare: expects two JSONL results files");
    const missing = await compare([base, join(dir, "nope.jsonl")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`compare: cannot read ${join(dir, "nope.jsonl")}: ENOENT`);
    expect(existsSync(join(dir, "nope.jsonl"))).toBe(false);
  });
});
