/**
 * The mock's legal cache behaviours over real HTTP: --insert-at, --inflight-pages, --no-output-cache, the forget
 * fault (--fault-forget-every), and what the truth lines (--truth) say of them.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { MockOptions } from "../../../src/mock/options.ts";
import type { MockServer } from "../../../src/mock/server.ts";
import { genBody, ids, post, start, streamPayloads, waitForStats } from "./mock-http.ts";

const dir = mkdtempSync(join(tmpdir(), "mock-behaviours-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Meta = { cached_tokens: number; cached_tokens_details: { device: number; host: number } };

/** A non-streamed /generate: what it reported cached. */
async function cachedOf(server: MockServer, inputIds: number[], maxNewTokens = 2): Promise<number> {
  const res = await post(server, genBody(inputIds, maxNewTokens, false));
  expect(res.status).toBe(200);
  return ((await res.json()) as { meta_info: Meta }).meta_info.cached_tokens;
}

/** A streamed /generate read up to its first event (its prefill is over); the rest is read by `drain`, or cut by `abort`. */
async function startDecoding(server: MockServer, inputIds: number[], maxNewTokens: number) {
  const abort = new AbortController();
  const res = await fetch(`${server.url}/generate`, { method: "POST", body: JSON.stringify(genBody(inputIds, maxNewTokens)), signal: abort.signal });
  const reader = res.body!.getReader();
  await reader.read();
  return {
    drain: async (): Promise<void> => {
      while (!(await reader.read()).done);
    },
    abort: () => abort.abort(),
  };
}

type TruthLine = Record<string, unknown> & { cached_tokens: number; forgotten_tokens: number; prompt_tokens: number; end: string };
const readTruth = (file: string): TruthLine[] =>
  readFileSync(file, "utf8")
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as TruthLine);

const decoding: Partial<MockOptions> = { itlMs: 5 };

describe("--insert-at", () => {
  const prompt = ids(32, 100);
  for (const [insertAt, whileDecoding] of [
    ["prefill", 32],
    ["finish", 0],
  ] as const) {
    test(`${insertAt}: a second request sent while the first decodes finds ${whileDecoding}; after it ends, the prompt`, async () => {
      const server = await start({ ...decoding, insertAt });
      const first = await startDecoding(server, prompt, 60);
      expect(await cachedOf(server, [...prompt, 7])).toBe(whileDecoding);
      await first.drain();
      await waitForStats(server, (s) => s.running === 0);
      expect(await cachedOf(server, [...prompt, 7])).toBe(32);
    });
  }

  test("finish: a request cut off after its first token caches the prompt it computed", async () => {
    const server = await start({ ...decoding, insertAt: "finish" });
    const first = await startDecoding(server, prompt, 200);
    expect(server.stats().cacheTokens).toBe(0);
    first.abort();
    await waitForStats(server, (s) => s.running === 0);
    expect(server.stats().cacheTokens).toBe(32);
    expect(await cachedOf(server, [...prompt, 7])).toBe(32);
  });

  for (const noOutputCache of [false, true]) {
    test(`finish${noOutputCache ? " with --no-output-cache" : ""}: the answer is cached with the prompt ${noOutputCache ? "never" : "at the end"}`, async () => {
      const server = await start({ insertAt: "finish", noOutputCache });
      const answer = (await (await post(server, genBody(prompt, 6, false))).json()) as { output_ids: number[] };
      expect(await cachedOf(server, [...prompt, ...answer.output_ids, 5])).toBe(noOutputCache ? 32 : 37);
    });
  }
});

describe("--inflight-pages", () => {
  // A decodes on a 64-token cache while B's prompt comes and goes; then A's prompt again (A still running).
  for (const [inflightPages, aAfter] of [
    ["evictable", 0],
    ["locked", 64],
  ] as const) {
    test(`${inflightPages}: eviction under pressure ${inflightPages === "locked" ? "spares" : "takes"} the running request's pages`, async () => {
      const server = await start({ ...decoding, cacheTokens: 64, inflightPages });
      const a = await startDecoding(server, ids(64, 1000), 100);
      expect(await cachedOf(server, ids(64, 5000))).toBe(0);
      expect(await cachedOf(server, [...ids(64, 1000), 1])).toBe(aAfter);
      expect(server.stats().cacheTokens).toBeLessThanOrEqual(64 + 64);
      a.abort();
      const s = await waitForStats(server, (st) => st.running === 0);
      expect(s.cacheTokens).toBeLessThanOrEqual(64);
    });
  }
});

describe("--fault-forget-every", () => {
  test("every 3rd measured request that hits reports 0, pays the whole prefill, and still caches its prompt; the truth says what it forgot", async () => {
    const file = join(dir, "forget.jsonl");
    // 100 uncached tokens cost 200 ms, one costs 2.
    const server = await start({ truthFile: file, faultForgetEvery: 3, prefillUsPerToken: 2000 });
    const prompt = ids(100, 300);
    await cachedOf(server, prompt, 1); // warm: never measured
    const reported: number[] = [];
    const ttftMs: number[] = [];
    for (let k = 1; k <= 4; k++) {
      const t0 = performance.now();
      reported.push(await cachedOf(server, [...prompt, k], 3));
      ttftMs.push(performance.now() - t0);
    }
    expect(reported).toEqual([100, 100, 0, 100]);
    expect(ttftMs[2]!).toBeGreaterThan(180);
    expect(Math.max(ttftMs[0]!, ttftMs[1]!, ttftMs[3]!)).toBeLessThan(150);
    // The forgotten request's prompt (and answer) went in as if it had hit.
    expect(await cachedOf(server, [...prompt, 3, 5])).toBe(101);
    expect(server.stats().faultsInjected).toEqual({ forget: 1 });
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toContain('sglang:cached_tokens_total{cache_source="device",model_name="mock-model"} 401.0');
    await server.stop();
    const lines = readTruth(file);
    expect(lines.map((l) => [l.cached_tokens, l.forgotten_tokens])).toEqual([
      [0, 0],
      [100, 0],
      [100, 0],
      [0, 100],
      [100, 0],
      [101, 0],
    ]);
    expect(lines.every((l) => l.end === "done")).toBe(true);
  });

  test("a picked request that would miss is not forgotten and not counted; the next one that hits is", async () => {
    const file = join(dir, "forget-miss.jsonl");
    const server = await start({ truthFile: file, faultForgetEvery: 1 });
    expect(await cachedOf(server, ids(20, 700), 3)).toBe(0);
    expect(server.stats().faultsInjected).toEqual({});
    expect(await cachedOf(server, [...ids(20, 700), 1], 3)).toBe(0);
    expect(server.stats().faultsInjected).toEqual({ forget: 1 });
    await server.stop();
    expect(readTruth(file).map((l) => l.forgotten_tokens)).toEqual([0, 20]);
  });

  test("it fires with another fault on the same request: an abort that also forgot its cache", async () => {
    const file = join(dir, "forget-abort.jsonl");
    const server = await start({ truthFile: file, faultForgetEvery: 2, abortEvery: 2 });
    const prompt = ids(40, 900);
    await cachedOf(server, prompt, 1);
    await streamPayloads(await post(server, genBody([...prompt, 1], 4)));
    await streamPayloads(await post(server, genBody([...prompt, 2], 4)));
    await waitForStats(server, (s) => s.running === 0);
    expect(server.stats().faultsInjected).toEqual({ abort: 1, forget: 1 });
    await server.stop();
    expect(readTruth(file).map((l) => [l.cached_tokens, l.forgotten_tokens, l.end])).toEqual([
      [0, 0, "done"],
      [40, 0, "done"],
      [0, 40, "fault:abort"],
    ]);
  });
});

describe("truth lines name the cache behaviour", () => {
  for (const [overrides, settings] of [
    [{}, { insert_at: "prefill", inflight_pages: "evictable", output_cache: true }],
    [
      { insertAt: "finish", inflightPages: "locked", noOutputCache: true },
      { insert_at: "finish", inflight_pages: "locked", output_cache: false },
    ],
    [{ personality: "llamacpp" }, { insert_at: "prefill", inflight_pages: "locked", output_cache: true }],
  ] as const) {
    test(JSON.stringify(overrides), async () => {
      const file = join(dir, `settings-${Object.keys(overrides).join("-") || "default"}.jsonl`);
      const server = await start({ ...(overrides as Partial<MockOptions>), truthFile: file });
      const res = await post(server, { prompt: ids(8), max_tokens: 2, stream: false }, "/v1/completions");
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      await server.stop();
      const [line] = readTruth(file);
      expect(line).toMatchObject({ ...settings, forgotten_tokens: 0 });
      expect(Object.keys(line!).slice(-3)).toEqual(["insert_at", "inflight_pages", "output_cache"]);
    });
  }
});
