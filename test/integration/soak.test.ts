/**
 * Soak: 10,000 measured requests from the compiled binary against the in-process mock with five faults mixed in.
 * Every request must be accounted for (completed + failed == num_prompts per pct), every injected fault must
 * show up as exactly one failure of the matching kind, and no socket may be left open afterwards.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { LLAMA2_TOKENIZER, runCli, type CliResult } from "../helpers/run-cli.ts";
import { readJsonl } from "../helpers/results.ts";

const PCTS = [0, 50, 90, 99];
const PER_PCT = 2500;
const TOTAL = PCTS.length * PER_PCT;
const FAULTS = { failEvery: 97, errorEventEvery: 89, abortEvery: 83, resetEvery: 79, malformedEvery: 73 };
/** The mock's fault name -> the client's failure kind. */
const KIND_OF_FAULT: Record<string, string> = { fail: "http", "error-event": "server_error", abort: "abort", reset: "network", malformed: "parse" };

let mock: MockServer;
let run: CliResult;
let lines: any[];
let all: any[];

beforeAll(async () => {
  mock = await startMockServer(mockOptions({ port: 0, ttftBaseMs: 2, itlMs: 2, prefillUsPerToken: 0, ...FAULTS }));
  const out = join(mkdtempSync(join(tmpdir(), "warmbench-soak-")), "soak.jsonl");
  run = await runCli(
    [
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      mock.url,
      "--pcts",
      PCTS.join(","),
      "--num-prompts",
      String(PER_PCT),
      "--total-tokens",
      "16",
      "--output-len",
      "4",
      "--max-concurrency",
      "256",
      "--settle",
      "0",
      "--output-file",
      out,
    ],
    { timeoutMs: 110_000 },
  );
  all = readJsonl(out);
  lines = all;
}, 120_000);

afterAll(async () => {
  await mock.stop();
});

describe(`soak: ${TOTAL} measured requests, concurrency 256, five faults mixed in`, () => {
  test("every pct completes and exits 3 (some requests failed)", () => {
    if (run.code !== 3) console.error(run.stderr.slice(-3000));
    expect(run.code).toBe(3);
    expect(lines.map((l) => l.shared_prefix_pct)).toEqual(PCTS);
    expect(all.at(-1).ttft_model.n).toBe(all.reduce((n: number, l: any) => n + l.completed, 0));
  });

  test("every request is accounted for: completed + failed == num_prompts in every pct", () => {
    for (const l of lines) {
      expect(l.completed + l.failed).toBe(PER_PCT);
      expect(l.sent).toBe(PER_PCT);
      expect(l.failed).toBeGreaterThan(0);
      const byKindTotal = Object.values(l.errors_by_kind as Record<string, number>).reduce((a, b) => a + b, 0);
      expect(byKindTotal).toBe(l.failed);
    }
    expect(mock.stats().faultsInjected).not.toHaveProperty("exit");
    // The load really was concurrent (the client kept many requests open at once).
    expect(mock.stats().maxInFlight).toBeGreaterThan(64);
  });

  test("failures by kind equal the faults the mock injected, and nothing else failed", () => {
    const clientByKind: Record<string, number> = {};
    for (const l of lines) {
      for (const [kind, n] of Object.entries(l.errors_by_kind as Record<string, number>)) clientByKind[kind] = (clientByKind[kind] ?? 0) + n;
    }
    const injected = mock.stats().faultsInjected;
    const expected: Record<string, number> = {};
    for (const [fault, n] of Object.entries(injected)) expected[KIND_OF_FAULT[fault] ?? `unexpected fault ${fault}`] = n;
    expect(clientByKind).toEqual(expected);
    // The mock picks by ordinal (first flag wins): the counts are known in advance.
    const expectedInjected = expectedFaultCounts(TOTAL);
    expect(injected).toEqual(expectedInjected);
    expect(all.reduce((n: number, l: any) => n + l.failed, 0)).toBe(Object.values(expectedInjected).reduce((a, b) => a + b, 0));
  });

  test("no socket is left open on the server after the run", async () => {
    const deadline = Date.now() + 5000;
    while (mock.stats().openConnections > 0 && Date.now() < deadline) await Bun.sleep(50);
    expect(mock.stats().openConnections).toBe(0);
    expect(mock.stats().running).toBe(0);
    expect(mock.stats().queued).toBe(0);
  });
});

/** The faults.ts rule, independently: request k gets the first of fail, reset, error-event, abort, malformed that divides k. */
function expectedFaultCounts(requests: number): Record<string, number> {
  const order: Array<[string, number]> = [
    ["fail", FAULTS.failEvery],
    ["reset", FAULTS.resetEvery],
    ["error-event", FAULTS.errorEventEvery],
    ["abort", FAULTS.abortEvery],
    ["malformed", FAULTS.malformedEvery],
  ];
  const counts: Record<string, number> = {};
  for (let k = 1; k <= requests; k++) {
    const hit = order.find(([, every]) => k % every === 0);
    if (hit) counts[hit[0]] = (counts[hit[0]] ?? 0) + 1;
  }
  return counts;
}
