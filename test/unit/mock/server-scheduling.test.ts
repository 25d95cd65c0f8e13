/** The mock's prefix cache, flush, latency model and admission, observed over real HTTP. */
import { afterEach, describe, expect, test } from "bun:test";
import { mockOptions, type MockOptions } from "../../../src/mock/options.ts";
import { startMockServer, type MockServer } from "../../../src/mock/server.ts";
import type { MockStats } from "../../../src/mock/types.ts";

const servers: MockServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

async function start(overrides: Partial<MockOptions> = {}): Promise<MockServer> {
  const server = await startMockServer(mockOptions({ port: 0, ttftBaseMs: 1, prefillUsPerToken: 0, itlMs: 1, ...overrides }));
  servers.push(server);
  return server;
}

type Meta = { completion_tokens: number; cached_tokens: number; cached_tokens_details: unknown };

/** Send one streamed request; resolve with its first event's meta_info and TTFT (ms from send). */
async function generate(server: MockServer, inputIds: number[], maxNewTokens = 2, signal?: AbortSignal): Promise<{ meta: Meta; ttftMs: number }> {
  const t0 = performance.now();
  const res = await fetch(server.url + "/generate", {
    method: "POST",
    body: JSON.stringify({ input_ids: inputIds, sampling_params: { max_new_tokens: maxNewTokens, temperature: 0, ignore_eos: true }, stream: true }),
    signal,
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let raw = "";
  let ttftMs = -1;
  for (;;) {
    const chunk = await reader.read();
    if (chunk.done) break;
    raw += decoder.decode(chunk.value, { stream: true });
    if (ttftMs < 0 && raw.includes("\n\n")) ttftMs = performance.now() - t0;
  }
  expect(raw.endsWith("data: [DONE]\n\n")).toBe(true);
  const first = raw.split("\n\n")[0]!;
  const data = JSON.parse(first.slice("data: ".length)) as { meta_info: Meta };
  return { meta: data.meta_info, ttftMs };
}

async function stats(server: MockServer): Promise<MockStats> {
  return (await (await fetch(server.url + "/mock/stats")).json()) as MockStats;
}

const seq = (n: number, start: number): number[] => Array.from({ length: n }, (_, i) => start + i);

describe("cached_tokens", () => {
  for (const pageSize of [1, 16]) {
    test(`a warm prefix is reported in whole pages (page size ${pageSize})`, async () => {
      const server = await start({ pageSize });
      const prefix = seq(100, 1000);
      expect((await generate(server, prefix, 1)).meta.cached_tokens).toBe(0);
      const full = [...prefix, ...seq(50, 5000)];
      const warm = (await generate(server, full)).meta;
      const expected = Math.floor(100 / pageSize) * pageSize;
      expect(warm.cached_tokens).toBe(expected);
      expect(warm.cached_tokens_details).toEqual({ device: expected, host: 0 });
      // The same prompt again: everything but the last token (page-rounded) comes from the cache.
      expect((await generate(server, full)).meta.cached_tokens).toBe(Math.floor(149 / pageSize) * pageSize);
      const received = server.stats().received.map((r) => r.cachedTokens);
      expect(received).toEqual([0, expected, Math.floor(149 / pageSize) * pageSize]);
      // A finished request caches its prompt and every output token but the last (2 - 1 here).
      expect(server.stats().cacheTokens).toBe(Math.floor(151 / pageSize) * pageSize);
    });
  }

  test("the LRU cache evicts when over capacity", async () => {
    const server = await start({ cacheTokens: 250 });
    await generate(server, seq(100, 1000), 1);
    await generate(server, seq(100, 2000), 1);
    await generate(server, seq(100, 3000), 1);
    const s = server.stats();
    expect(s.cacheTokens).toBe(250);
    expect(s.evictedTokens).toBe(50);
    expect((await generate(server, [...seq(100, 1000), 1])).meta.cached_tokens).toBe(50);
  });
});

describe("flush_cache", () => {
  const SUCCESS =
    "Cache flushed.\nPlease check backend logs for more details. (When there are running or waiting requests, the operation will not be performed.)\n";

  test("400 while a request runs, 200 once idle, and the cache is empty afterwards", async () => {
    const server = await start({ itlMs: 20 });
    const prompt = seq(64, 1);
    await generate(server, prompt, 1);
    expect(server.stats().cacheTokens).toBe(64);
    const running = generate(server, seq(10, 500), 25);
    await Bun.sleep(60);
    const busy = await fetch(server.url + "/flush_cache", { method: "POST" });
    expect(busy.status).toBe(400);
    expect(await busy.text()).toBe("Flush cache failed.\n");
    await running;
    const ok = await fetch(server.url + "/flush_cache");
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe(SUCCESS);
    const s = server.stats();
    expect(s.cacheTokens).toBe(0);
    expect(s.flushes).toBe(1);
    expect(s.flushRejected).toBe(1);
    expect((await generate(server, [...prompt, 7], 1)).meta.cached_tokens).toBe(0);
  });

  test("?timeout= waits for idle, times out, and refuses a second concurrent flush", async () => {
    const server = await start({ itlMs: 20 });
    const running = generate(server, seq(10, 1), 20); // about 400 ms
    await Bun.sleep(60);
    const short = await fetch(server.url + "/flush_cache?timeout=0.05", { method: "POST" });
    expect(short.status).toBe(400);
    expect(await short.text()).toBe("Timed out waiting for idle state.");
    const waiting = fetch(server.url + "/flush_cache?timeout=30", { method: "POST" });
    await Bun.sleep(30);
    const second = await fetch(server.url + "/flush_cache", { method: "POST" });
    expect(second.status).toBe(400);
    expect(await second.text()).toBe("Another flush_cache is already in progress.");
    const waited = await waiting;
    expect(waited.status).toBe(200);
    expect(await waited.text()).toBe(SUCCESS);
    await running;
    expect(server.stats().cacheTokens).toBe(0);
    expect((await fetch(server.url + "/flush_cache?timeout=-1")).status).toBe(400);
  });
});

describe("latency model", () => {
  test("TTFT grows with uncached prompt tokens", async () => {
    const server = await start({ ttftBaseMs: 20, prefillUsPerToken: 60 });
    const prompt = seq(5000, 1); // 300 ms of prefill when cold
    const cold = await generate(server, prompt, 1);
    const warm = await generate(server, [...prompt, 1], 1);
    const small = await generate(server, seq(10, 90_000), 1);
    expect(cold.meta.cached_tokens).toBe(0);
    expect(warm.meta.cached_tokens).toBe(5000);
    expect(cold.ttftMs).toBeGreaterThanOrEqual(320);
    expect(warm.ttftMs).toBeLessThan(cold.ttftMs - 150);
    expect(small.ttftMs).toBeLessThan(cold.ttftMs - 150);
  });

  test("decode paces events at itlMs per token", async () => {
    const server = await start({ itlMs: 25 });
    const t0 = performance.now();
    await generate(server, seq(5, 1), 9); // 8 gaps after the first token
    expect(performance.now() - t0).toBeGreaterThanOrEqual(8 * 25);
  });

  test("serialPrefill runs one prefill at a time", async () => {
    const server = await start({ ttftBaseMs: 150, serialPrefill: true });
    const t0 = performance.now();
    const results = await Promise.all([1, 2, 3].map((k) => generate(server, seq(5, k * 100), 1)));
    expect(performance.now() - t0).toBeGreaterThanOrEqual(3 * 150);
    expect(Math.max(...results.map((r) => r.ttftMs))).toBeGreaterThanOrEqual(3 * 150);
  });

  test("at most maxRunning requests run; the rest queue FIFO", async () => {
    const server = await start({ maxRunning: 2, itlMs: 50 });
    const all = [1, 2, 3, 4, 5].map((k) => generate(server, seq(5, k * 100), 5)); // each about 200 ms
    let s = await stats(server);
    for (let i = 0; i < 100 && s.generateRequests < 5; i++) s = await stats(server);
    expect(s.running).toBe(2);
    expect(s.queued).toBe(3);
    const ttfts = (await Promise.all(all)).map((r) => r.ttftMs).sort((a, b) => a - b);
    expect(ttfts[1]!).toBeLessThan(150);
    expect(ttfts[2]!).toBeGreaterThanOrEqual(200);
    expect(ttfts[4]!).toBeGreaterThanOrEqual(400);
    s = await stats(server);
    expect(s).toMatchObject({ running: 0, queued: 0, maxRunning: 5, maxInFlight: 5, generateRequests: 5 });
  });
});

describe("disconnects", () => {
  test("a client that goes away mid-stream frees its slot", async () => {
    const server = await start({ maxRunning: 1, itlMs: 20 });
    const abort = new AbortController();
    const res = await fetch(server.url + "/generate", {
      method: "POST",
      body: JSON.stringify({ input_ids: seq(5, 1), sampling_params: { max_new_tokens: 1000 }, stream: true }),
      signal: abort.signal,
    });
    await res.body!.getReader().read();
    abort.abort();
    const t0 = performance.now();
    await generate(server, seq(5, 50), 2); // would wait 20 s behind the first request otherwise
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(server.stats()).toMatchObject({ running: 0, queued: 0 });
    expect((await fetch(server.url + "/flush_cache")).status).toBe(200);
  });

  test("a client that goes away while queued or waiting for a non-streamed answer is forgotten", async () => {
    const server = await start({ maxRunning: 1, itlMs: 20 });
    const abort = new AbortController();
    const body = (stream: boolean): string => JSON.stringify({ input_ids: seq(5, 1), sampling_params: { max_new_tokens: 1000 }, stream });
    const running = fetch(server.url + "/generate", { method: "POST", body: body(false), signal: abort.signal }).catch(() => null);
    const queued = fetch(server.url + "/generate", { method: "POST", body: body(true), signal: abort.signal }).catch(() => null);
    let s = await stats(server);
    for (let i = 0; i < 100 && s.generateRequests < 2; i++) s = await stats(server);
    expect(s).toMatchObject({ running: 1, queued: 1 });
    abort.abort();
    await Promise.all([running, queued]);
    for (let i = 0; i < 100 && (s.running > 0 || s.queued > 0); i++) {
      await Bun.sleep(10);
      s = await stats(server);
    }
    expect(s).toMatchObject({ running: 0, queued: 0 });
  });
});
