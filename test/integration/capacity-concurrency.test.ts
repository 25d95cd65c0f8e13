/**
 * `warmbench capacity --search concurrency` against mocks with a known capacity, then its results through compare and
 * merge. A mock with M slots runs M requests at once; in a closed loop of c > M clients one request always waits a
 * whole service time S for a slot, far beyond the gate's 100 ms slack over a request's own TTFT, while c <= M never
 * waits: the capacity at that gate is exactly M. Two mocks (8 and 4 slots) give two searches whose capacities compare
 * as a throughput (the 4-slot build regressed by half), and a search result is refused by merge.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockProcess, type MockProcess } from "../helpers/mock-process.ts";
import { readJsonl } from "../helpers/results.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";

const BASE_MS = 100;
const ITL_MS = 10;
const PREFILL_US = 50;
const TOTAL = 2000;
const OUT = 10;
const PCT = 90;
const SLACK_MS = 100;
/** A request's own TTFT at PCT, ms (its prefix warmed): the gate allows SLACK_MS of waiting over it. */
const ALONE_TTFT_MS = BASE_MS + (PREFILL_US * (TOTAL - Math.floor((TOTAL * PCT) / 100))) / 1000;
/** Service time, ms: a waiter waits this long for a slot, beyond the slack. */
const SERVICE_MS = ALONE_TTFT_MS + (OUT - 1) * ITL_MS;

const mockArgs = (slots: number) => [
  "--max-running",
  String(slots),
  "--ttft-base-ms",
  String(BASE_MS),
  "--itl-ms",
  String(ITL_MS),
  "--prefill-us-per-token",
  String(PREFILL_US),
];

let dir: string;
let eight: MockProcess;
let four: MockProcess;
const runs: Record<string, { code: number; stderr: string; stdout: string }> = {};
const file = (name: string) => join(dir, name);
const search = (url: string, name: string) =>
  runCli(
    [
      "capacity",
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      url,
      "--total-tokens",
      String(TOTAL),
      "--output-len",
      String(OUT),
      "--pcts",
      String(PCT),
      "--search",
      "concurrency",
      "--num-prompts",
      "32",
      "--settle",
      "0",
      "--output-file",
      file(name),
      "--quiet",
      "--gate",
      `p99_ttft_ms<=${ALONE_TTFT_MS + SLACK_MS}`,
      "--gate",
      "failed==0",
    ],
    { timeoutMs: 300_000 },
  );

beforeAll(async () => {
  expect(SERVICE_MS).toBeGreaterThan(SLACK_MS * 1.5);
  dir = mkdtempSync(join(tmpdir(), "warmbench-capacity-c-"));
  [eight, four] = await Promise.all([startMockProcess(mockArgs(8)), startMockProcess(mockArgs(4))]);
  // One after the other: the two searches must not share the CPU's timing noise.
  runs.eight = await search(eight.url, "eight.jsonl");
  runs.four = await search(four.url, "four.jsonl");
}, 620_000);
afterAll(async () => {
  await Promise.all([eight?.stop(), four?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

const capacityOf = (name: string) => readJsonl(file(name)).filter((l) => l.type === "capacity");

describe("--search concurrency against a known capacity", () => {
  for (const [name, slots] of [
    ["eight", 8],
    ["four", 4],
  ] as const) {
    test(`${slots} slots: capacity_concurrency is exactly ${slots}, bracketed by [${slots}, ${slots + 1}], in a bounded number of probes`, () => {
      expect(runs[name]!.code, runs[name]!.stderr).toBe(0);
      const [line] = capacityOf(`${name}.jsonl`);
      expect(line.search).toBe("concurrency");
      expect(line.capacity_status).toBe("found");
      expect(line.capacity_concurrency).toBe(slots);
      expect(line.capacity_request_rate).toBeNull();
      expect(line.capacity_bracket).toEqual([slots, slots + 1]);
      expect(line.binding_gate).toMatch(/^p99_ttft_ms/);
      // From the default start of 4: double to a failure, then bisect an integer bracket; the confirmations included.
      expect(line.probes_sent).toBeLessThanOrEqual(10);
      const probes = readJsonl(file(`${name}.jsonl`)).filter((l) => l.type === undefined);
      expect(probes.length).toBe(line.probes_sent);
      for (const p of probes) {
        expect(String(p.request_rate)).toBe("Infinity"); // a closed loop (readJsonl keeps the token as text)
        const waited = p.max_concurrency > slots;
        expect(p.gates.every((g: { pass: boolean }) => g.pass)).toBe(!waited);
        // The failing probes failed for the wait a slot costs, not for noise: at least a service time less the slack.
        if (waited) expect(p.p99_ttft_ms).toBeGreaterThan(ALONE_TTFT_MS + SERVICE_MS * 0.8);
      }
    });
  }
});

describe("consumers of a capacity line", () => {
  test("compare pairs the searches by pct and judges capacity as a throughput: half the slots is a regression (exit 7)", async () => {
    const r = await runCli(["compare", file("eight.jsonl"), file("four.jsonl"), "--max-regress", "capacity_concurrency=10%"]);
    expect(r.stdout).toMatch(/capacity_concurrency/);
    const row = r.stdout.split("\n").find((l) => l.includes("capacity_concurrency"))!;
    expect(row).toMatch(/\b8\b/);
    expect(row).toMatch(/\b4\b/);
    expect(row).toMatch(/-50(\.0)?\s*%/);
    expect(row).toMatch(/REGRESSED/);
    // A capacity line has no latencies: only its own metrics are judged.
    expect(r.stdout).not.toMatch(/p99_ttft_ms/);
    expect(r.code).toBe(7);
  });

  test("compare the other way: more capacity is better, exit 0", async () => {
    const r = await runCli(["compare", file("four.jsonl"), file("eight.jsonl"), "--max-regress", "capacity_concurrency=10%"]);
    const row = r.stdout.split("\n").find((l) => l.includes("capacity_concurrency"))!;
    expect(row).toMatch(/\+100(\.0)?\s*%/);
    expect(row).toMatch(/better/);
    expect(r.code).toBe(0);
  });

  test("merge refuses a search result with one clear line (exit 2), writing nothing", async () => {
    const r = await runCli(["merge", file("eight.jsonl"), file("four.jsonl"), "-o", file("merged.jsonl")]);
    expect(r.stderr).toMatch(/eight\.jsonl holds a capacity search .* not mergeable/);
    expect(r.code).toBe(2);
    expect(await Bun.file(file("merged.jsonl")).exists()).toBe(false);
  });
});
