/**
 * Two runs of one server must not fail compare at its default limits (16 prompts per pct, no repeats). The mock
 * stalls every 20th measured request for 500 ms after its second token, counting over its whole life: the first run's
 * stall lands in its 90 % line, the second run's in its 0 % line too. So the second run's 0 % line has a mean ITL
 * and an output throughput past their limits by one request's stall, which 0.4 called REGRESSED (exit 7): judged with
 * the run's own interval (a bootstrap over its requests) they are noisy, and compare exits 0. Against a server slower
 * per token, the same compare still fails.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockProcess, type MockProcess } from "../helpers/mock-process.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-compare-noise-"));
let stalling: MockProcess;
let slower: MockProcess;

// Latencies of tens of ms, so that a busy box's scheduling delays (a few ms on a whole line) stay within the limits:
// the run's own interval is the noise of its requests, not of the box between two runs.
const MOCK = ["--page-size", "16", "--ttft-base-ms", "50", "--prefill-us-per-token", "20"];

beforeAll(async () => {
  stalling = await startMockProcess([...MOCK, "--itl-ms", "20", "--stall-every", "20", "--stall-s", "0.5"]);
  slower = await startMockProcess([...MOCK, "--itl-ms", "24"]);
});

afterAll(async () => {
  await stalling.stop();
  await slower.stop();
});

async function run(name: string, url: string): Promise<string> {
  const file = join(dir, `${name}.jsonl`);
  const r = await runCli([
    "--model",
    LLAMA2_TOKENIZER,
    "--base-url",
    url,
    "--pcts",
    "0,90",
    "--num-prompts",
    "16",
    "--total-tokens",
    "600",
    "--output-len",
    "16",
    "--settle",
    "0",
    "--quiet",
    "--output-file",
    file,
  ]);
  if (r.code !== 0) throw new Error(`${name}: run exited ${r.code}: ${r.stderr}`);
  return file;
}

/** The rows of compare's --md table at a line, by metric. */
function rowsAt(md: string, label: string): Map<string, Record<string, string>> {
  const lines = md.split("\n").filter((l) => l.startsWith("|"));
  const head = lines[0]!.split("|").map((c) => c.trim());
  const out = new Map<string, Record<string, string>>();
  for (const l of lines.slice(2)) {
    const cells = l.split("|").map((c) => c.trim().replace(/\\(.)/g, "$1"));
    const row = Object.fromEntries(head.map((h, i) => [h, cells[i] ?? ""]));
    if (row.line === label || row.pct === label) out.set(row.metric!, row);
  }
  return out;
}

describe("compare of two single runs of one server", () => {
  test("a stalled request past the limits is noisy, not REGRESSED: exit 0; a slower server still fails", async () => {
    const base = await run("base", stalling.url);
    const next = await run("next", stalling.url);
    const md = join(dir, "same.md");
    const same = await runCli(["compare", base, next, "--md", md]);
    if (same.code !== 0) console.error(same.stdout, same.stderr);
    expect(same.code).toBe(0);
    const at0 = rowsAt(readFileSync(md, "utf8"), "0%");
    // The stall is there: by its value alone, NEW's 0 % line is past the mean ITL limit (5 %).
    const itl = at0.get("mean_itl_ms")!;
    expect(Number.parseFloat(itl["Δ%"]!)).toBeGreaterThan(5);
    expect(itl.verdict).toBe("noisy");
    expect(same.stdout).toContain("noisy, not a failure");
    expect(same.stdout).toMatch(/noisy: .*mean_itl_ms at 0%: \+\d+\.\d% \(the run's own 95% CI [-+]\d+\.\d%\.\.\+\d+\.\d%, limit 5%\)/);

    const slow = await run("slow", slower.url);
    const r = await runCli(["compare", base, slow]);
    expect(r.code).toBe(7);
    expect(r.stderr).toMatch(/mean_itl_ms at 0%: \+\d+\.\d% \(limit 5%\)/);
  }, 120_000);
});
