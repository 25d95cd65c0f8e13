/**
 * Capacity carries only successful load. A 3-slot server failing every 2nd request (its 503s come back at once)
 * was reported at its offered rate, twice what it served, with no note in the result row, and compare of that
 * search against a healthy one called it better and paired searches judged by different gates. Now a probe with
 * failures fails unless a gate on failed allows them, an allowed failure counts against the rate carried, the
 * result line carries the evidence of the probe that set it, and compare pairs only searches with the same gates.
 * The compiled binary against mock processes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockProcess, type MockProcess } from "../helpers/mock-process.ts";
import { readJsonl } from "../helpers/results.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-capacity-failures-"));
// 3 slots, each request ~100 ms (20 ms to the first token, 8 tokens 10 ms apart).
const SERVER = ["--max-running", "3", "--ttft-base-ms", "20", "--itl-ms", "10", "--prefill-us-per-token", "0", "--page-size", "16"];
let failing: MockProcess;
let healthy: MockProcess;
/** The files of the first two searches, compared in the last test. */
const files = { failing: "", allowed: "" };

beforeAll(async () => {
  [failing, healthy] = await Promise.all([startMockProcess([...SERVER, "--fail-every", "2"]), startMockProcess(SERVER)]);
});
afterAll(async () => {
  await Promise.all([failing.stop(), healthy.stop()]);
});

/** One search at pct 0 within 8:64 req/s, one probe per verdict; its capacity line, every probe, and the run. */
async function search(name: string, url: string, gates: string[]) {
  const out = join(dir, `${name}.jsonl`);
  const r = await runCli([
    "capacity",
    "--model",
    LLAMA2_TOKENIZER,
    "--base-url",
    url,
    "--pcts",
    "0",
    "--total-tokens",
    "200",
    "--output-len",
    "8",
    "--bracket",
    "8:64",
    "--num-prompts",
    "24",
    "--precision",
    "30%",
    "--confirm",
    "1",
    "--settle",
    "0",
    "--quiet",
    ...gates.flatMap((g) => ["--gate", g]),
    "--output-file",
    out,
  ]);
  const lines = readJsonl(out);
  return { r, out, capacity: lines.find((l) => l.type === "capacity")!, probes: lines.filter((l) => typeof l.probe === "number") };
}

const SLO = "ttft_from_intended_p99_ms<=190";

describe("capacity carries only successful load", () => {
  test("a server failing every 2nd request has no capacity at a latency SLO, and the result line says why", async () => {
    const { capacity, probes, out } = await search("failing", failing.url, [SLO]);
    files.failing = out;
    // Every probe lost half its requests, so none passes: capacity 0 at the lowest load, not the offered rate.
    expect(probes.every((p) => p.failed > 0)).toBe(true);
    expect(capacity.capacity_status).toBe("below_min");
    expect(capacity.capacity_request_rate).toBe(0);
    expect(capacity.binding_gate).toContain("requests failed");
    // The evidence of the probe that set it (the lowest load, which failed): half of its requests finished.
    expect(capacity.evidence.requests.finished).toBe(capacity.evidence.requests.sent / 2);
    expect(capacity.evidence.load.offered_request_rate).toBe(capacity.capacity_bracket[1]);
    expect(capacity.search_gates).toEqual([SLO]);
  }, 60_000);

  test("where a gate on failed allows the failures, the capacity counts only the requests that finished", async () => {
    const { capacity, out } = await search("allowed", failing.url, [SLO, "failed<=12"]);
    files.allowed = out;
    const [lo] = capacity.capacity_bracket;
    expect(lo).toBeGreaterThan(0);
    // Half of what was offered at the passing load finished: that, not the offered rate, is what the server carried.
    expect(capacity.evidence.load.offered_request_rate).toBe(lo);
    expect(capacity.evidence.requests.finished).toBe(12);
    expect(capacity.capacity_request_rate).toBeCloseTo(lo / 2, 6);
    expect(capacity.search_gates).toEqual([SLO, "failed<=12"]);
  }, 60_000);

  test("compare of the failing search against a healthy one is never better, and searches under other gates are not paired", async () => {
    const ok = await search("healthy", healthy.url, [SLO]);
    expect(ok.capacity.capacity_status).toBe("found");
    expect(ok.capacity.capacity_request_rate).toBeGreaterThan(8);
    expect(ok.capacity.evidence.requests.finished).toBe(ok.capacity.evidence.requests.sent);
    const worse = await runCli(["compare", ok.out, files.failing]);
    const row = worse.stdout.split("\n").find((l) => l.includes("capacity_request_rate"))!;
    expect(row).toContain("-100.0%");
    expect(row).toContain("worse");
    expect(worse.stdout).not.toMatch(/capacity_request_rate.*better/);
    // The probe that set NEW's capacity lost half its requests, BASE's none: a failing check, exit 7.
    expect(worse.code).toBe(7);
    expect(worse.stderr).toMatch(/0%: more_failures: the probe that set NEW's capacity lost \d+ of \d+ requests \(BASE's 0 of \d+; any increase fails\)/);

    const refused = await runCli(["compare", ok.out, files.allowed]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `0%: the capacity searches were judged by different gates, so their capacities hold at different SLOs (base ["${SLO}"], new ["${SLO}","failed<=12"])`,
    );
  }, 90_000);
});
