/**
 * compare takes a limit on every key a gate may name that the two files carry: 0.4 said "compare knows no metric" of
 * ttft_from_intended_*, loss_*_ratio and fidelity_*. A count with no samples is null, never 0: fidelity_diverged at
 * 0 % (no prefix to reuse, nothing compared) was 0, a divergence count that never looked. The compiled binary against
 * a mock process.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockProcess, type MockProcess } from "../helpers/mock-process.ts";
import { readJsonl } from "../helpers/results.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-compare-limits-"));
let mock: MockProcess;
let n = 0;

async function run(pcts: string): Promise<{ file: string; lines: any[] }> {
  const file = join(dir, `r${n++}.jsonl`);
  const r = await runCli([
    "--model",
    LLAMA2_TOKENIZER,
    "--base-url",
    mock.url,
    "--num-prompts",
    "4",
    "--total-tokens",
    "96",
    "--output-len",
    "8",
    "--pcts",
    pcts,
    "--settle",
    "0",
    "--quiet",
    "--check-fidelity",
    "--fidelity-sample",
    "3",
    "--output-file",
    file,
  ]);
  if (r.code !== 0) throw new Error(`run exited ${r.code}: ${r.stderr}`);
  return { file, lines: readJsonl(file) };
}

let a: { file: string; lines: any[] };
let b: { file: string; lines: any[] };

beforeAll(async () => {
  mock = await startMockProcess(["--ttft-base-ms", "1", "--prefill-us-per-token", "5", "--itl-ms", "0", "--page-size", "16", "--vocab-size", "32000"]);
  a = await run("50");
  b = await run("50");
});
afterAll(async () => {
  await mock.stop();
});

describe("limits on the keys a gate may name", () => {
  test("a limit on a latency from the intended send or a fidelity count is judged, and shown in the table", async () => {
    const r = await runCli([
      "compare",
      a.file,
      b.file,
      "--only",
      "ttft_from_intended_p99_ms,fidelity_diverged",
      "--max-regress",
      "p99_ttft_from_intended_ms=100000%,fidelity_diverged=0%",
    ]);
    expect(r.stderr).not.toContain("compare knows no metric");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/50%\s+ttft_from_intended_p99_ms\s+line .* 100000%/);
    expect(r.stdout).toMatch(/50%\s+fidelity_diverged\s+line\s+0\s+0\s/);
  });

  test("a limit on a key these files do not carry (the ledger's, without replicas) is exit 2 naming it", async () => {
    const r = await runCli(["compare", a.file, b.file, "--max-regress", "loss_routing_ratio=5%"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("compare: loss_routing_ratio is not a metric of these files' lines");
  });
});

describe("a count with no samples is null", () => {
  test("fidelity_diverged where nothing was compared (0 %: no prefix to reuse) is null, not 0; where answers were compared, a count", async () => {
    const zero = await run("0");
    expect(zero.lines[0]).toMatchObject({ fidelity_checked: 0, fidelity_diverged: null, fidelity_identical: null, fidelity_near_tie: null });
    expect(a.lines[0]).toMatchObject({ fidelity_checked: 3, fidelity_diverged: 0, fidelity_identical: 3 });
  });
});
