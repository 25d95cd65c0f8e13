/**
 * ITL with multi-token events, end to end: the compiled binary against the mock streaming one event per 3 tokens
 * (SGLang --stream-interval 3). The script's rule: an event's gap is spread evenly over the Δcompletion_tokens it
 * carried. The mock's ground truth (--truth) says which tokens each event carried; --request-details says what
 * the client recorded.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { LLAMA2_TOKENIZER, runCli, type CliResult } from "../helpers/run-cli.ts";

const STREAM_INTERVAL = 3;
const ITL_MS = 30;
/** 1 + 3k: the first event carries one token, every later one exactly three. */
const OUT_LEN = 10;
const N = 4;

interface Detail {
  request_id: string;
  ok: boolean;
  ttft_ms: number;
  latency_ms: number;
  output_len: number;
  token_events: number;
  itl_ms: number[];
}
interface Truth {
  request_id: string | null;
  events_ms: number[];
  events_tokens: number[];
}

let mock: MockServer;
let dir: string;
let run: CliResult;
let details: Detail[];
let truthById: Map<string, Truth>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "warmbench-stream-interval-"));
  const truthFile = join(dir, "truth.jsonl");
  mock = await startMockServer(mockOptions({ port: 0, streamInterval: STREAM_INTERVAL, itlMs: ITL_MS, ttftBaseMs: 2, truthFile }));
  run = await runCli([
    "--model",
    LLAMA2_TOKENIZER,
    "--base-url",
    mock.url,
    "--pcts",
    "50",
    "--num-prompts",
    String(N),
    "--total-tokens",
    "300",
    "--output-len",
    String(OUT_LEN),
    "--max-concurrency",
    "2",
    "--settle",
    "0",
    "--output-file",
    join(dir, "out.jsonl"),
    "--request-details",
    join(dir, "details.jsonl"),
  ]);
  await mock.stop(); // writes the remaining truth lines
  details = readFileSync(join(dir, "details.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Detail);
  const truths = readFileSync(truthFile, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Truth);
  truthById = new Map(truths.filter((t) => t.request_id !== null).map((t) => [t.request_id!, t]));
});

afterAll(async () => {
  await mock.stop();
});

describe("--stream-interval 3: every ITL sample is its event's gap / 3", () => {
  test("the run succeeds and the mock sent 1, 4, 7, 10 tokens per request", () => {
    if (run.code !== 0) console.error(run.stderr);
    expect(run.code).toBe(0);
    expect(details).toHaveLength(N);
    for (const d of details) expect(truthById.get(d.request_id)?.events_tokens).toEqual([1, 4, 7, 10]);
  });

  test("ITL count: one sample per token after the first, from one event per 3 tokens", () => {
    for (const d of details) {
      expect(d.ok).toBe(true);
      expect(d.output_len).toBe(OUT_LEN);
      expect(d.token_events).toBe(4);
      expect(d.itl_ms).toHaveLength(OUT_LEN - 1);
    }
  });

  test("each event's 3 samples are equal and the samples add up to the event gaps (TTFT + Σ ITL = last event)", () => {
    for (const d of details) {
      for (let k = 0; k < d.itl_ms.length; k += STREAM_INTERVAL) {
        expect(new Set(d.itl_ms.slice(k, k + STREAM_INTERVAL)).size).toBe(1);
      }
      // The mock writes the last event and [DONE] at once: latency_ms is the last event's arrival time.
      const sum = d.itl_ms.reduce((a, b) => a + b, 0);
      expect(d.ttft_ms + sum).toBeCloseTo(d.latency_ms, 6);
    }
  });

  test("a sample is a third of the server's event gap, not the whole gap", () => {
    const ratios: number[] = [];
    for (const d of details) {
      const eventsMs = truthById.get(d.request_id)!.events_ms;
      for (let e = 1; e < eventsMs.length; e++) {
        const serverGapMs = eventsMs[e]! - eventsMs[e - 1]!;
        ratios.push(d.itl_ms[(e - 1) * STREAM_INTERVAL]! / (serverGapMs / STREAM_INTERVAL));
      }
    }
    ratios.sort((a, b) => a - b);
    const median = ratios[ratios.length >> 1]!;
    // Client-side gaps jitter around the server's; an undivided gap would sit at 3.
    expect(median).toBeGreaterThan(0.5);
    expect(median).toBeLessThan(1.5);
  });
});
