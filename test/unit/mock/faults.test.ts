/** Injected faults on /generate, each over real HTTP: what the wire carries and what the stats count. */
import { describe, expect, test } from "bun:test";
import { genBody, ids, payloadsOf, post, readRaw, start, streamPayloads, waitForStats } from "./mock-http.ts";

type Event = { text: string; output_ids: number[]; meta_info: { completion_tokens: number; finish_reason: unknown } };
const parseEvents = (payloads: string[]): Event[] => payloads.map((p) => JSON.parse(p) as Event);

describe("which requests a fault hits", () => {
  test("--fail-every 2: every 2nd measured request gets SGLang's 503; warm requests are never counted or failed", async () => {
    const server = await start({ failEvery: 2 });
    const statuses: number[] = [];
    for (let k = 0; k < 4; k++) {
      const warm = await post(server, genBody(ids(8, 100 * k), 1, false));
      expect(warm.status).toBe(200);
      await warm.arrayBuffer();
      const measured = await post(server, genBody(ids(8, 100 * k + 50), 4));
      statuses.push(measured.status);
      if (measured.status === 503) {
        expect(measured.headers.get("content-type")).toStartWith("application/json");
        expect(await measured.json()).toEqual({ object: "error", message: "mock: injected failure", type: "503", param: null, code: 503 });
      } else {
        expect((await streamPayloads(measured)).at(-1)).toBe("[DONE]");
      }
    }
    expect(statuses).toEqual([200, 503, 200, 503]);
    expect(server.stats().faultsInjected).toEqual({ fail: 2 });
    expect(server.stats().running).toBe(0);
  });

  test("/generate and /v1/completions share one count of measured requests", async () => {
    const server = await start({ failEvery: 2 });
    expect((await post(server, genBody(ids(4), 3, false))).status).toBe(200);
    const second = await post(server, { prompt: ids(4), max_tokens: 3 }, "/v1/completions");
    expect(second.status).toBe(503);
    expect(await second.json()).toEqual({ error: { message: "mock: injected failure", type: "ServiceUnavailableError", param: null, code: 503 } });
  });
});

describe("faults inside a stream fire after 2 token events", () => {
  test("--error-event-every: SGLang's error event then [DONE]; non-streaming gets a 400", async () => {
    const server = await start({ errorEventEvery: 1 });
    const payloads = await streamPayloads(await post(server, genBody(ids(5), 6)));
    expect(payloads.length).toBe(4);
    expect(parseEvents(payloads.slice(0, 2)).map((e) => e.meta_info.completion_tokens)).toEqual([1, 2]);
    expect(payloads[2]).toBe('{"error":{"message":"mock: injected error","type":"invalid_request_error","code":400,"retryable":false}}');
    expect(payloads[3]).toBe("[DONE]");
    const plain = await post(server, genBody(ids(5), 6, false));
    expect(plain.status).toBe(400);
    expect(await plain.json()).toEqual({ error: { message: "mock: injected error" } });
    const s = await waitForStats(server, (st) => st.running === 0);
    expect(s).toMatchObject({ running: 0, queued: 0, faultsInjected: { "error-event": 2 } });
  });

  test("--abort-every: a normal-looking event whose finish_reason is a 503 abort, then [DONE]", async () => {
    const server = await start({ abortEvery: 1 });
    const payloads = await streamPayloads(await post(server, genBody(ids(5), 6)));
    expect(payloads.length).toBe(4);
    expect(payloads[3]).toBe("[DONE]");
    const events = parseEvents(payloads.slice(0, 3));
    expect(events.map((e) => e.meta_info.finish_reason)).toEqual([
      null,
      null,
      { type: "abort", message: "Request running timeout reached.", status_code: 503, err_type: "ServiceUnavailable" },
    ]);
    expect(events[2]!.meta_info.completion_tokens).toBe(3);
    expect(JSON.stringify(events[2])).not.toContain('"error"');
    const plain = await post(server, genBody(ids(5), 6, false));
    expect(plain.status).toBe(503);
    expect(await plain.json()).toEqual({ object: "error", message: "Request running timeout reached.", type: "503", param: null, code: 503 });
  });

  test("--reset-every: the connection drops after 2 events, with no [DONE], and the slot is freed", async () => {
    const server = await start({ resetEvery: 1, maxRunning: 1 });
    const res = await post(server, genBody(ids(5), 50));
    expect(res.status).toBe(200);
    const { bytes, error } = await readRaw(res);
    expect(error).not.toBeNull();
    const payloads = payloadsOf(new TextDecoder().decode(bytes));
    expect(parseEvents(payloads).map((e) => e.meta_info.completion_tokens)).toEqual([1, 2]);
    const s = await waitForStats(server, (st) => st.running === 0 && st.openConnections === 0);
    expect(s).toMatchObject({ running: 0, openConnections: 0, faultsInjected: { reset: 1 } });
    // A warm request is never reset, so the server is still usable.
    expect((await streamPayloads(await post(server, genBody(ids(5), 1)))).at(-1)).toBe("[DONE]");
  });

  test("a request with fewer events takes the fault in place of its last one", async () => {
    const server = await start({ abortEvery: 1 });
    const payloads = await streamPayloads(await post(server, genBody(ids(5), 2)));
    const events = parseEvents(payloads.slice(0, -1));
    expect(events.length).toBe(2);
    expect(events[1]!.meta_info.finish_reason).toMatchObject({ type: "abort", status_code: 503 });
  });

  test("--stall-every: nothing for --stall-s after 2 events, then the stream continues to the end", async () => {
    const server = await start({ stallEvery: 1, stallS: 0.4, itlMs: 5 });
    const res = await post(server, genBody(ids(5), 6));
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    const arrivalsMs: number[] = [];
    let text = "";
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      const before = (text.match(/\n\n/g) ?? []).length;
      text += decoder.decode(chunk.value, { stream: true });
      const after = (text.match(/\n\n/g) ?? []).length;
      for (let i = before; i < after; i++) arrivalsMs.push(performance.now());
    }
    const payloads = payloadsOf(text);
    expect(payloads.at(-1)).toBe("[DONE]");
    expect(parseEvents(payloads.slice(0, -1)).map((e) => e.meta_info.completion_tokens)).toEqual([1, 2, 3, 4, 5, 6]);
    const gaps = arrivalsMs.slice(1, 6).map((t, i) => t - arrivalsMs[i]!);
    expect(gaps[1]!).toBeGreaterThanOrEqual(380); // between event 2 and event 3
    expect(Math.max(gaps[0]!, gaps[2]!, gaps[3]!)).toBeLessThan(300);
    expect(server.stats().faultsInjected).toEqual({ stall: 1 });
  });

  test("--malformed-every: one event with broken JSON, then the stream goes on", async () => {
    const server = await start({ malformedEvery: 1 });
    const payloads = await streamPayloads(await post(server, genBody(ids(5), 4)));
    expect(payloads[2]).toBe('{"text": "x", "meta_info": {');
    expect(() => JSON.parse(payloads[2]!)).toThrow();
    const good = [...payloads.slice(0, 2), ...payloads.slice(3, -1)];
    expect(parseEvents(good).map((e) => e.meta_info.completion_tokens)).toEqual([1, 2, 3, 4]);
    expect(payloads.at(-1)).toBe("[DONE]");
  });

  test("--invalid-utf8-every: exactly one token event carries a raw 0xff byte inside its text", async () => {
    const server = await start({ invalidUtf8Every: 1 });
    const { bytes, error } = await readRaw(await post(server, genBody(ids(5), 4)));
    expect(error).toBeNull();
    const events = Buffer.from(bytes)
      .toString("latin1")
      .split("\n\n")
      .filter((e) => e !== "");
    const bad = events.filter((e) => e.includes("\xff"));
    expect(bad.length).toBe(1);
    expect(bad[0]).toBe(events[2]);
    expect(() => new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(bad[0]!, "latin1"))).toThrow();
    // Read leniently, the event is still JSON whose text ends in U+FFFD.
    const lenient = JSON.parse(Buffer.from(bad[0]!, "latin1").toString("utf8").slice("data: ".length)) as Event;
    expect(lenient.text.endsWith("\uFFFD")).toBe(true);
    expect(lenient.meta_info.completion_tokens).toBe(3);
    expect(events.at(-1)).toBe("data: [DONE]");
  });
});

describe("server-wide misbehaviour", () => {
  test("--slow-headers-ms delays the status line and headers of every /generate", async () => {
    const server = await start({ slowHeadersMs: 300 });
    for (const maxNewTokens of [1, 3]) {
      const t0 = performance.now();
      const res = await post(server, genBody(ids(5), maxNewTokens));
      expect(performance.now() - t0).toBeGreaterThanOrEqual(280);
      expect((await streamPayloads(res)).at(-1)).toBe("[DONE]");
    }
    const t0 = performance.now();
    expect((await fetch(server.url + "/server_info")).status).toBe(200);
    expect(performance.now() - t0).toBeLessThan(250);
  });

  test("--flush-fail-first N: the first N flushes fail, as do the first N prefix-cache resets", async () => {
    const server = await start({ flushFailFirst: 2 });
    for (const expected of [400, 400, 200]) {
      const res = await fetch(server.url + "/flush_cache", { method: "POST" });
      expect(res.status).toBe(expected);
      if (expected === 400) expect(await res.text()).toBe("Flush cache failed.\n");
      else await res.text();
    }
    const resets: unknown[] = [];
    for (let i = 0; i < 3; i++) resets.push(await (await fetch(server.url + "/reset_prefix_cache", { method: "POST" })).json());
    expect(resets).toEqual([{ success: false }, { success: false }, { success: true }]);
    expect(server.stats()).toMatchObject({ flushes: 2, flushRejected: 4, faultsInjected: { "flush-fail": 2, "reset-prefix-fail": 2 } });
  });

  test("--flush-lies: flushes report success but the cache keeps its tokens", async () => {
    const server = await start({ flushLies: true });
    await streamPayloads(await post(server, genBody(ids(40), 1)));
    expect((await fetch(server.url + "/flush_cache")).status).toBe(200);
    expect(await (await fetch(server.url + "/reset_prefix_cache", { method: "POST" })).json()).toEqual({ success: true });
    expect(server.stats().cacheTokens).toBe(40);
    const events = parseEvents((await streamPayloads(await post(server, genBody([...ids(40), 1], 2)))).slice(0, -1));
    expect((events[0]!.meta_info as Record<string, unknown>).cached_tokens).toBe(40);
    expect(server.stats().faultsInjected).toEqual({ "flush-lie": 2 });
  });

  test("--no-generate: /generate is a 404, as on a server that is not SGLang", async () => {
    const server = await start({ noGenerate: true });
    const res = await post(server, genBody(ids(5), 2));
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ detail: "Not Found" });
    expect((await fetch(server.url + "/v1/models")).status).toBe(200);
  });

  test("openConnections follows the TCP sockets", async () => {
    const server = await start({ itlMs: 20 });
    expect(server.stats().openConnections).toBe(0);
    const abort = new AbortController();
    const res = await fetch(server.url + "/generate", { method: "POST", body: JSON.stringify(genBody(ids(5), 500)), signal: abort.signal });
    await res.body!.getReader().read();
    expect(server.stats().openConnections).toBe(1);
    abort.abort();
    const s = await waitForStats(server, (st) => st.openConnections === 0 && st.running === 0);
    expect(s).toMatchObject({ openConnections: 0, running: 0 });
  });
});

describe("the prefix cache under pressure", () => {
  test("a small --cache-tokens evicts old suffixes but keeps the warm prefix every request reuses", async () => {
    const pageSize = 16;
    const server = await start({ cacheTokens: 400, pageSize });
    const prefix = ids(160, 1000);
    await streamPayloads(await post(server, genBody(prefix, 1))); // warm
    const cached: number[] = [];
    for (let k = 0; k < 12; k++) {
      const payloads = await streamPayloads(await post(server, genBody([...prefix, ...ids(64, 5000 + 100 * k)], 2)));
      cached.push((JSON.parse(payloads[0]!) as { meta_info: { cached_tokens: number } }).meta_info.cached_tokens);
    }
    expect(cached).toEqual(Array(12).fill(160));
    const s = server.stats();
    expect(s.cacheTokens).toBeLessThanOrEqual(400);
    expect(s.evictedTokens).toBe(160 + 12 * 64 - s.cacheTokens);
    // A suffix that was evicted is a miss beyond the prefix; the newest one is still a hit.
    const oldest = await streamPayloads(await post(server, genBody([...prefix, ...ids(64, 5000), 7], 2)));
    const newest = await streamPayloads(await post(server, genBody([...prefix, ...ids(64, 5000 + 1100), 7], 2)));
    expect((JSON.parse(oldest[0]!) as { meta_info: { cached_tokens: number } }).meta_info.cached_tokens).toBe(160);
    expect((JSON.parse(newest[0]!) as { meta_info: { cached_tokens: number } }).meta_info.cached_tokens).toBe(224);
  });
});
