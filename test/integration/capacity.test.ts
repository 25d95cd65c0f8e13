/**
 * `warmbench capacity` as a process against the mock with a known capacity: 8 requests run at once, each holding its
 * slot for a fixed service time S = ttft_base + prefill of its uncached tokens + (output_len - 1) x itl, so with
 * evenly spaced arrivals nothing waits below 8 / S req/s and the queue grows above it. The gate allows 100 ms of
 * waiting over a request's own TTFT, which N requests above capacity r > C accumulate once N (1/C - 1/r) > 0.1 s: the
 * capacity at that SLO lies between C and 1 / (1/C - 0.1/N).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockProcess, type MockProcess } from "../helpers/mock-process.ts";
import { readJsonl } from "../helpers/results.ts";
import { BINARY, LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";

const SLOTS = 8;
const BASE_MS = 100;
const ITL_MS = 10;
const PREFILL_US = 50;
const TOTAL = 2000;
const OUT = 30;
const N = 40;
const SLACK_S = 0.1;
/** Service time at a pct: its uncached tokens are prefilled, the prefix (warmed) is not. */
const serviceS = (pct: number) => (BASE_MS + (PREFILL_US * (TOTAL - Math.floor((TOTAL * pct) / 100))) / 1000 + (OUT - 1) * ITL_MS) / 1000;
const truth = (pct: number) => SLOTS / serviceS(pct);
const sloTruth = (pct: number) => 1 / (1 / truth(pct) - SLACK_S / N);
/** A request's own TTFT at the pct, ms: what the gate adds its slack to. */
const aloneTtftMs = (pct: number) => BASE_MS + (PREFILL_US * (TOTAL - Math.floor((TOTAL * pct) / 100))) / 1000;

const MOCK = ["--max-running", String(SLOTS), "--ttft-base-ms", String(BASE_MS), "--itl-ms", String(ITL_MS), "--prefill-us-per-token", String(PREFILL_US)];
const gateAt = (pct: number) => `ttft_from_intended_p99_ms<=${aloneTtftMs(pct) + SLACK_S * 1000}@pct=${pct}`;

let dir: string;
let mock: MockProcess;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "warmbench-capacity-"));
  mock = await startMockProcess(MOCK);
});
afterAll(async () => {
  await mock.stop();
  rmSync(dir, { recursive: true, force: true });
});

const workload = (url: string, file: string) => [
  "capacity",
  "--model",
  LLAMA2_TOKENIZER,
  "--base-url",
  url,
  "--total-tokens",
  String(TOTAL),
  "--output-len",
  String(OUT),
  "--num-prompts",
  String(N),
  "--settle",
  "0",
  "--output-file",
  join(dir, file),
  "--quiet",
];

const capacityLines = (file: string) => readJsonl(join(dir, file)).filter((l) => l.type === "capacity");
const probeLines = (file: string) => readJsonl(join(dir, file)).filter((l) => l.type === undefined);

describe("against a known capacity, evenly spaced arrivals", () => {
  let even: { code: number; stderr: string; stdout: string };
  beforeAll(async () => {
    // From a start 2x above pct 90's capacity (2.4x above pct 0's); --require far above what the mock carries: exit 6.
    even = await runCli(
      [
        ...workload(mock.url, "even.jsonl"),
        "--pcts",
        "0,90",
        "--burstiness",
        "inf",
        "--start",
        "40",
        "--gate",
        gateAt(0),
        "--gate",
        gateAt(90),
        "--gate",
        "failed==0",
        "--require",
        "1000@pct>=90",
      ],
      { timeoutMs: 400_000 },
    );
  }, 420_000);

  for (const pct of [0, 90]) {
    test(`pct ${pct}: lands within 5 % of ${SLOTS} / S, in a bounded number of probes`, () => {
      const line = capacityLines("even.jsonl").find((l) => l.shared_prefix_pct === pct)!;
      expect(line.capacity_status).toBe("found");
      const found = line.capacity_request_rate as number;
      console.error(
        `capacity at ${pct}%: ${found.toFixed(2)} req/s (truth ${truth(pct).toFixed(2)}, SLO truth ${sloTruth(pct).toFixed(2)}), ` +
          `${line.probes_sent} probes (${line.probes_counted} votes), ${line.search_wall_s.toFixed(1)} s`,
      );
      expect(found).toBeGreaterThanOrEqual(truth(pct) * 0.95);
      expect(found).toBeLessThanOrEqual(sloTruth(pct) * 1.05);
      const [lo, hi] = line.capacity_bracket;
      expect(lo).toBe(found);
      expect((hi - lo) / lo).toBeLessThanOrEqual(0.05);
      expect(line.binding_gate).toStartWith("ttft_from_intended_p99_ms<=");
      // The estimate, ~5 bracketing and bisecting probes, two confirmations per end.
      expect(line.probes_sent).toBeLessThanOrEqual(12);
      expect(probeLines("even.jsonl").filter((l) => l.shared_prefix_pct === pct)).toHaveLength(line.probes_sent);
    });
  }

  test("every probe is a controlled point: flushed and proven, warmed, cache checked, its gates judged on it", () => {
    const probes = probeLines("even.jsonl");
    for (const [i, p] of probes.entries()) {
      expect(p.flushed).toBe(true);
      expect(p.flush_verified).toBe(true);
      expect(p.cache_check).toBe("ok");
      expect(p.gates.length).toBe(2); // failed==0 and the gate scoped to its pct
      expect(p.run_id).toBe(probes[0].run_id);
      expect("run" in p).toBe(i === 0);
    }
    expect(probes.filter((p) => p.shared_prefix_pct === 90).every((p) => p.warm_verified === true)).toBe(true);
    // Probes are numbered per pct in the order sent, from --start.
    expect(probes.filter((p) => p.shared_prefix_pct === 0).map((p) => p.probe)).toEqual(probes.filter((p) => p.shared_prefix_pct === 0).map((_, i) => i));
    expect(probes[0].request_rate).toBe(40);
  });

  test("a higher shared prefix carries more load (less to prefill); --require above it exits 6", () => {
    const [at0, at90] = [0, 90].map((pct) => capacityLines("even.jsonl").find((l) => l.shared_prefix_pct === pct)!.capacity_request_rate);
    expect(at90).toBeGreaterThan(at0);
    expect(even.code).toBe(6);
    expect(even.stderr).toContain("--require 1000@pct>=90");
    expect(even.stdout).toMatch(/pct\s+capacity \(req\/s\)\s+bracket/);
    expect(even.stdout).toMatch(/^\s*90%\s+\d/m);
  });

  test("Poisson arrivals give a lower capacity than even spacing on the same mock (queueing); --require below it passes", async () => {
    // Without --start: the first probe is a closed loop whose throughput is the estimate (written, not a vote).
    const r = await runCli([...workload(mock.url, "poisson.jsonl"), "--pcts", "90", "--burstiness", "1", "--gate", gateAt(90), "--require", "1"], {
      timeoutMs: 300_000,
    });
    expect(r.code).toBe(0);
    const poisson = capacityLines("poisson.jsonl")[0]!.capacity_request_rate as number;
    const even90 = capacityLines("even.jsonl").find((l) => l.shared_prefix_pct === 90)!.capacity_request_rate as number;
    console.error(`pct 90: Poisson ${poisson.toFixed(2)} req/s vs even ${even90.toFixed(2)} req/s`);
    expect(poisson).toBeGreaterThan(0);
    expect(poisson).toBeLessThan(even90 * 0.9);
    const [estimate, first] = probeLines("poisson.jsonl");
    expect(estimate.request_rate).toBe("Infinity");
    expect(first.request_rate).toBeCloseTo(Number(estimate.request_throughput.toPrecision(3)), 6);
  }, 320_000);
});

describe("a probe whose cache check failed", () => {
  test("is repeated once at the same load, never counted, and the pct reports no capacity (exit 4)", async () => {
    const liar = await startMockProcess(["--flush-lies"]);
    try {
      const r = await runCli([
        ...workload(liar.url, "liar.jsonl"),
        "--pcts",
        "90",
        "--start",
        "10",
        "--num-prompts",
        "10",
        "--total-tokens",
        "200",
        "--output-len",
        "4",
        "--gate",
        "p99_ttft_ms<=1000",
      ]);
      expect(r.code).toBe(4);
      const probes = probeLines("liar.jsonl");
      expect(probes.map((p) => p.request_rate)).toEqual([10, 10]);
      expect(probes.every((p) => p.cache_check !== "ok")).toBe(true);
      expect(probes.every((p) => p.gates[0].pass)).toBe(true); // its gate passed, and still it was no evidence
      const [line] = capacityLines("liar.jsonl");
      expect(line.capacity_status).toBe("cache_unproven");
      expect(line.capacity_request_rate).toBeNull();
      expect(line.probes_counted).toBe(0);
      expect(line.probes_sent).toBe(2);
      expect(line.capacity_reason).toContain("cache check failed twice at 10");
    } finally {
      await liar.stop();
    }
  }, 60_000);
});

describe("faults", () => {
  test("SIGINT writes the probes so far and exits 130", async () => {
    const file = join(dir, "sigint.jsonl");
    const proc = Bun.spawn([BINARY, ...workload(mock.url, "sigint.jsonl"), "--pcts", "0", "--start", "5", "--gate", gateAt(0)], {
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, NO_COLOR: "1" },
    });
    // Each probe takes ~8 s at 5 req/s: after 12 s one has finished and the second is under way.
    await Bun.sleep(12_000);
    proc.kill("SIGINT");
    expect(await proc.exited).toBe(130);
    const probes = probeLines("sigint.jsonl");
    expect(probes.length).toBeGreaterThanOrEqual(2);
    expect(probes[0].interrupted).toBe(false);
    expect(probes.at(-1).interrupted).toBe(true);
    const [line] = capacityLines("sigint.jsonl");
    expect(line.capacity_status).toBe("interrupted");
    expect(line.capacity_request_rate).toBeNull();
    void file;
  }, 60_000);

  test("a server that dies mid-search: exit 1, every finished probe written", async () => {
    const dying = await startMockProcess(["--exit-after", "25"]);
    try {
      const r = await runCli([
        ...workload(dying.url, "dying.jsonl"),
        "--pcts",
        "0",
        "--start",
        "20",
        "--num-prompts",
        "10",
        "--total-tokens",
        "200",
        "--output-len",
        "4",
        "--gate",
        "p99_ttft_ms<=1000",
        "--gate",
        "failed==0",
      ]);
      expect(r.code).toBe(1);
      const probes = probeLines("dying.jsonl");
      expect(probes.length).toBeGreaterThanOrEqual(2);
      expect(probes[0].completed).toBe(10);
      expect(probes[1].completed).toBe(10);
      expect(capacityLines("dying.jsonl")).toHaveLength(0);
    } finally {
      await dying.stop();
    }
  }, 60_000);
});

describe("bad input: exit 2 before anything is sent", () => {
  // Port 9 has no server: any request would end in a connection error (exit 1), not a usage error.
  const base = ["capacity", "--model", LLAMA2_TOKENIZER, "--base-url", "http://127.0.0.1:9", "--pcts", "0,90"];
  const cases: [string, string[], RegExp][] = [
    ["no gate", [], /at least one --gate/],
    ["a floor on a throughput", ["--gate", "output_throughput>=100"], /output_throughput grows with load.*does not bound a capacity/],
    ["a lower bound on a latency", ["--gate", "p99_ttft_ms>=100"], /only an upper bound/],
    ["a metric load does not move", ["--gate", "mean_cached_tokens<=5"], /mean_cached_tokens does not depend on the load/],
    ["a gate scoped by the searched axis", ["--gate", "p99_ttft_ms<=5@request_rate>=2"], /@request_rate is set by the search/],
    ["a bracket bound below zero", ["--gate", "p99_ttft_ms<=5", "--bracket", "-1:10"], /--bracket -1:10: the low bound must be above 0/],
    ["a bracket upside down", ["--gate", "p99_ttft_ms<=5", "--bracket", "10:2"], /--bracket 10:2: the high bound/],
    ["precision 0", ["--gate", "p99_ttft_ms<=5", "--precision", "0"], /--precision 0: must be above 0%/],
    ["precision without its percent sign", ["--gate", "p99_ttft_ms<=5", "--precision", "0.05"], /--precision 0.05: write the percent sign \(5%\)/],
    ["precision 50 %", ["--gate", "p99_ttft_ms<=5", "--precision", "50%"], /--precision 50%: must be above 0/],
    ["a start outside the bracket", ["--gate", "p99_ttft_ms<=5", "--start", "50000"], /--start 50000: outside the --bracket/],
    ["a --require no pct matches", ["--gate", "p99_ttft_ms<=5", "--require", "10@pct>=95"], /--require "10@pct>=95": its scope matches none/],
    [
      "--max-concurrency with a concurrency search",
      ["--gate", "p99_ttft_ms<=5", "--search", "concurrency", "--max-concurrency", "4"],
      /--max-concurrency: a concurrency search/,
    ],
    ["a run flag the search sets", ["--gate", "p99_ttft_ms<=5", "--request-rate", "4"], /request-rate/],
    ["two working-set sizes", ["--gate", "p99_ttft_ms<=5", "--working-set", "1,4"], /one working-set size/],
    [
      "--duration with --num-prompts",
      ["--gate", "p99_ttft_ms<=5", "--duration", "5", "--num-prompts", "100"],
      /--duration: not with --num-prompts: --num-prompts is the other way to size a probe/,
    ],
  ];
  for (const [what, args, message] of cases) {
    test(what, async () => {
      const r = await runCli([...base, ...args]);
      expect(r.stderr).toMatch(message);
      expect(r.code).toBe(2);
    });
  }
});
