/**
 * The emitter (bench/emitter/emitter.c) as the bench uses it: compiled with cc, started on an ephemeral port
 * with a truth log, streams read with fetch and checked event by event (SGLang's scanner from src/ classifies
 * them), the truth log joined with what this process received (bench/lib/join.ts), and its lateness figures
 * recomputed from the truth. No timing bound is asserted (speed is bench/'s business), only causality.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { scanSglangEvent } from "../../src/backends/sglang-events.ts";
import { createEventFields } from "../../src/backends/types.ts";
import { outputTokenId, outputTokenText } from "../../src/mock/output.ts";
import { buildEmitter, parseEmitterStats, type EmitterStats } from "../lib/emitter.ts";
import { joinDetails, parseDetails, parseJsonl, parseTruth } from "../lib/join.ts";
import { readIfExists, startServer } from "../lib/procs.ts";
import { percentile } from "../lib/stats.ts";

const root = resolve(import.meta.dir, "..", "..");
const VOCAB = 151936; // the emitter's and the mock's default vocabulary size
let dir: string;
let bin: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "emitter-test-"));
  bin = await buildEmitter(root, dir);
}, 60_000);

/** Emitters not stopped yet: a failed test leaves its own behind, and afterAll stops it. */
const running = new Set<() => Promise<void>>();

afterAll(async () => {
  await Promise.all([...running].map((stop) => stop()));
  rmSync(dir, { recursive: true, force: true });
});

/**
 * How far two of the emitter's stamps may differ from the same instant, ms: each is cut to a whole µs (under 1 µs
 * between two), its lateness rounded to 0.1 µs, and an epoch ms near 1.8e12 held in a double is exact to about
 * 0.24 µs (two of them parsed). A figure off by more is a real disagreement.
 */
const STAMP_MS = 0.0016;
const epochMs = (): number => performance.timeOrigin + performance.now();
let emitterCount = 0;

/** A started emitter with its own truth file. */
async function startEmitter(args: string[]) {
  const truthPath = join(dir, `truth-${++emitterCount}.jsonl`);
  const server = await startServer([bin, "--port", "0", "--truth", truthPath, ...args]);
  let stopped: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    running.delete(stop);
    stopped ??= server.stop();
    return stopped;
  };
  running.add(stop);
  return {
    ...server,
    stop,
    truthPath,
    stats: async (): Promise<EmitterStats> => parseEmitterStats((await (await fetch(`${server.url}/emitter/stats`)).json()) as Record<string, unknown>),
    truth: () => parseTruth(readIfExists(truthPath)),
    rawTruth: () => parseJsonl(readIfExists(truthPath), truthPath),
  };
}

interface Received {
  status: number;
  contentType: string | null;
  startMs: number;
  /** Each SSE data payload with the epoch ms at which the chunk that completed it was read. */
  events: Array<{ payload: string; receivedMs: number }>;
}

/**
 * POSTs `body` and reads the SSE stream to its end, or until `stopAfter` events or `stop` resolves (then aborts);
 * `onEvent` is called after each event.
 */
async function stream(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  stopAfter = Infinity,
  stop?: Promise<unknown>,
  onEvent?: () => void,
): Promise<Received> {
  const abort = new AbortController();
  let stopped = false;
  void stop?.then(() => {
    stopped = true;
    abort.abort();
  });
  const startMs = epochMs();
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    signal: abort.signal,
  });
  const events: Received["events"] = [];
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let pending = "";
  for (;;) {
    const { value, done } = await reader.read().catch((err: unknown) => {
      if (stopped) return { value: undefined, done: true };
      throw err;
    });
    if (done) break;
    const receivedMs = epochMs();
    pending += decoder.decode(value, { stream: true });
    for (let at = pending.indexOf("\n\n"); at >= 0; at = pending.indexOf("\n\n")) {
      const block = pending.slice(0, at);
      pending = pending.slice(at + 2);
      expect(block.startsWith("data: ")).toBe(true);
      events.push({ payload: block.slice("data: ".length), receivedMs });
      onEvent?.();
    }
    if (events.length >= stopAfter) {
      abort.abort();
      break;
    }
  }
  if (events.length < stopAfter && !stopped) expect(pending).toBe("");
  return { status: res.status, contentType: res.headers.get("content-type"), startMs, events };
}

const generateBody = (ids: number, maxNewTokens: number) => ({
  input_ids: Array.from({ length: ids }, (_, i) => (i * 37) % 32000),
  sampling_params: { temperature: 0.0, max_new_tokens: maxNewTokens, ignore_eos: true },
  stream: true,
});

const word = (i: number) => outputTokenText(outputTokenId(i, VOCAB));

describe("SGLang /generate through the emitter", () => {
  test("events, truth log, join and lateness: one stream, start to end", async () => {
    // --rt as in the bench: at normal priority a busy box can preempt the emitter between its send() and its
    // stamp, and the stamp is then late by that much (the client may even have read the event before it).
    const em = await startEmitter(["--ttft-ms", "5", "--itl-ms", "4", "--rt"]);
    const got = await stream(`${em.url}/generate`, generateBody(5, 12), { "x-request-id": "req-a" });
    const stats = await em.stats();
    await em.stop();

    expect(got.status).toBe(200);
    expect(got.contentType).toBe("text/event-stream; charset=utf-8");
    expect(got.events.map((e) => e.payload).at(-1)).toBe("[DONE]");
    const tokenEvents = got.events.slice(0, -1);
    expect(tokenEvents).toHaveLength(12);
    const fields = createEventFields();
    tokenEvents.forEach((e, i) => {
      // The client's own hot-path scanner: every event a token event with the cumulative count...
      const kind = scanSglangEvent(new TextEncoder().encode(e.payload), fields);
      expect(kind).toBe("tokens");
      expect(fields.completionTokens).toBe(i + 1);
      expect(fields.cachedTokens).toBe(0);
      expect(fields.finishType).toBe(i < 11 ? null : "length");
      // ...and the full shape: incremental text (the mock's words), meta_info in SGLang's order.
      const ev = JSON.parse(e.payload) as { text: string; output_ids: number[]; meta_info: Record<string, unknown> };
      expect(ev.text).toBe(word(i));
      expect(ev.output_ids).toEqual([outputTokenId(i, VOCAB)]);
      expect(Object.keys(ev.meta_info).slice(0, 9)).toEqual([
        "id",
        "finish_reason",
        "prompt_tokens",
        "weight_version",
        "num_retractions",
        "reasoning_tokens",
        "completion_tokens",
        "cached_tokens",
        "cached_tokens_details",
      ]);
      expect(ev.meta_info.prompt_tokens).toBe(5);
      expect(ev.meta_info.completion_tokens).toBe(i + 1);
      expect(ev.meta_info.finish_reason).toEqual(i < 11 ? null : { type: "length", length: 12 });
      expect("response_sent_to_client_ts" in ev.meta_info).toBe(i === 0);
      expect("e2e_latency" in ev.meta_info).toBe(i === 11);
    });

    const truth = em.truth();
    expect(truth).toHaveLength(1);
    const t = truth[0]!;
    expect(t).toMatchObject({ requestId: "req-a", promptTokens: 5, cachedTokens: 0, completionTokens: 12 });
    expect(t.eventsTokens).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect(t.receivedMs).toBeGreaterThanOrEqual(got.startMs - 0.2);
    const raw = em.rawTruth()[0]!;
    expect(raw.end).toBe("done");
    const dueMs = raw.events_due_ms as number[];
    // Due = receipt + TTFT + k * ITL, to the µs the log prints; every stamp at or after its due time.
    for (const [k, d] of dueMs.entries()) expect(Math.abs(d - (t.receivedMs + 5 + 4 * k))).toBeLessThanOrEqual(STAMP_MS);
    for (const [k, ms] of t.eventsMs.entries()) expect(ms).toBeGreaterThanOrEqual(dueMs[k]!);

    // The bench's join, fed with what this process saw: one request joined, no token mismatch, and every event
    // received after the emitter wrote it (within the cross-process clock agreement of a few µs).
    const firstMs = tokenEvents[0]!.receivedMs;
    const detail = {
      request_id: "req-a",
      pct: 0,
      index: 0,
      ok: true,
      failure_kind: null,
      start_epoch_ms: got.startMs,
      ttft_ms: firstMs - got.startMs,
      latency_ms: got.events.at(-1)!.receivedMs - got.startMs,
      output_len: 12,
      cached_tokens: 0,
      itl_ms: tokenEvents.slice(1).map((e, i) => e.receivedMs - tokenEvents[i]!.receivedMs),
    };
    const j = joinDetails(parseDetails(JSON.stringify(detail)), truth);
    expect(stats.rt).toBe(true); // SCHED_FIFO needs root or CAP_SYS_NICE
    expect(j).toMatchObject({ ok: 1, joined: 1, unmatched: 0, mismatched: 0 });
    expect(j.eventDelayMs).toHaveLength(12);
    for (const d of j.eventDelayMs) expect(d).toBeGreaterThan(-0.2);

    // Its own lateness figures are exactly those of its truth log (ns inside, µs in the log).
    const lateMs = t.eventsMs.map((ms, k) => ms - dueMs[k]!);
    expect(stats).toMatchObject({ generateRequests: 1, completionsRequests: 0, maxInFlight: 1, events: 12, disconnects: 0, partialWrites: 0 });
    expect(stats.lateness.count).toBe(12);
    for (const p of [50, 99]) expect(Math.abs(stats.lateness[p === 50 ? "p50" : "p99"] - percentile(lateMs, p))).toBeLessThanOrEqual(STAMP_MS);
    expect(Math.abs(stats.lateness.max - Math.max(...lateMs))).toBeLessThanOrEqual(STAMP_MS);
    // One stream alone: its whole life is the steady window, minus its first and last event.
    expect(stats.steadyLateness.count).toBe(10);
    expect(stats.tickLateness).toBeNull();
  }, 30_000);

  test("megabytes of prompt ids are counted, not parsed; keys inside strings are not keys", async () => {
    const em = await startEmitter(["--ttft-ms", "1", "--itl-ms", "1"]);
    const body = { note: 'max_new_tokens: 99, "input_ids": [1, 2]', ...generateBody(300_000, 3), rid: 'x\\"]}' };
    const got = await stream(`${em.url}/generate`, body);
    await em.stop();
    expect(JSON.stringify(body).length).toBeGreaterThan(1_500_000);
    const tokenEvents = got.events.slice(0, -1).map((e) => JSON.parse(e.payload) as { meta_info: { prompt_tokens: number; completion_tokens: number } });
    expect(tokenEvents.map((e) => e.meta_info.completion_tokens)).toEqual([1, 2, 3]);
    expect(tokenEvents[0]!.meta_info.prompt_tokens).toBe(300_000);
    expect(em.truth()[0]!.promptTokens).toBe(300_000);
  }, 30_000);

  test("--events and --tokens-per-event override the body: each event carries several tokens", async () => {
    const em = await startEmitter(["--ttft-ms", "1", "--itl-ms", "2", "--events", "3", "--tokens-per-event", "4"]);
    const got = await stream(`${em.url}/generate`, generateBody(8, 100), { "x-request-id": "multi" });
    await em.stop();
    const tokenEvents = got.events
      .slice(0, -1)
      .map((e) => JSON.parse(e.payload) as { text: string; output_ids: number[]; meta_info: { completion_tokens: number } });
    expect(tokenEvents.map((e) => e.meta_info.completion_tokens)).toEqual([4, 8, 12]);
    expect(tokenEvents[1]!.text).toBe([4, 5, 6, 7].map(word).join(""));
    expect(tokenEvents[1]!.output_ids).toEqual([4, 5, 6, 7].map((i) => outputTokenId(i, VOCAB)));
    expect(em.truth()[0]!.eventsTokens).toEqual([4, 8, 12]);
  }, 30_000);

  test("stream: false is refused with a 400; other false values stream as usual", async () => {
    const em = await startEmitter(["--ttft-ms", "1", "--itl-ms", "1"]);
    const res = await fetch(`${em.url}/generate`, { method: "POST", body: JSON.stringify({ ...generateBody(4, 2), stream: false }) });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("only streams");
    const body = { ...generateBody(4, 2), sampling_params: { temperature: 0, max_new_tokens: 2, ignore_eos: false } };
    const got = await stream(`${em.url}/generate`, body);
    await em.stop();
    expect(got.status).toBe(200);
    expect(got.events.map((e) => e.payload).at(-1)).toBe("[DONE]");
    expect(got.events).toHaveLength(3);
  }, 30_000);

  test("a client that goes away mid-stream ends its request as a disconnect", async () => {
    const em = await startEmitter(["--ttft-ms", "1", "--itl-ms", "5"]);
    const got = await stream(`${em.url}/generate`, generateBody(4, 1000), { "x-request-id": "gone" }, 3);
    expect(got.events.length).toBeGreaterThanOrEqual(3);
    let stats = await em.stats();
    for (let i = 0; i < 100 && stats.disconnects === 0; i++) {
      await Bun.sleep(20);
      stats = await em.stats();
    }
    await em.stop();
    expect(stats.disconnects).toBe(1);
    const raw = em.rawTruth();
    expect(raw).toHaveLength(1);
    expect(raw[0]).toMatchObject({ request_id: "gone", end: "disconnect" });
    expect((raw[0]!.events_ms as number[]).length).toBeLessThan(1000);
  }, 30_000);
});

describe("--sync: every stream's k-th event on one grid of decode steps", () => {
  test("streams started apart share their due times, and the stats tell tick lateness from burst length", async () => {
    const itlMs = 10;
    const em = await startEmitter(["--ttft-ms", "3", "--itl-ms", String(itlMs), "--sync"]);
    // a runs until b is done, so that b's events all fall on ticks that a uses as well.
    let bDone: () => void = () => {};
    const bFinished = new Promise<void>((r) => (bDone = r));
    const a = stream(`${em.url}/generate`, generateBody(4, 5000), { "x-request-id": "a" }, Infinity, bFinished);
    let aStarted = await em.stats();
    while (aStarted.events < 2) {
      await Bun.sleep(5);
      aStarted = await em.stats();
    }
    await stream(`${em.url}/generate`, generateBody(4, 8), { "x-request-id": "b" });
    bDone();
    await a;
    for (let s = await em.stats(); s.disconnects === 0; s = await em.stats()) await Bun.sleep(5);
    const stats = await em.stats();
    await em.stop();
    const raw = em.rawTruth();
    const due = (id: string) => raw.find((l) => l.request_id === id)!.events_due_ms as number[];
    const [da, db] = [due("a"), due("b")];
    // One grid: every due time is a whole number of steps from any other (µs in the log).
    for (const d of [...da, ...db]) {
      const steps = (d - da[0]!) / itlMs;
      expect(Math.abs(steps - Math.round(steps))).toBeLessThanOrEqual(0.0002);
    }
    // b started later, while a ran: every one of its events shares its tick with one of a's.
    expect(db).toHaveLength(8);
    expect(db.filter((d) => da.includes(d))).toEqual(db);
    expect(db[0]!).toBeGreaterThan(da[0]!);
    expect(stats.tickLateness).not.toBeNull();
    expect(stats.burstMs).not.toBeNull();
    // One tick per distinct due time.
    expect(stats.tickLateness!.count).toBe(new Set([...da, ...db]).size);
  }, 30_000);
});

describe("--min-gap-us: streams hold slots of the ITL period", () => {
  /** The phase of each stream's first due time in the ITL period, ms (µs in the log). */
  async function phases(args: string[], streams: number, ttftMs: number, itlMs: number) {
    const em = await startEmitter(["--ttft-ms", String(ttftMs), "--itl-ms", String(itlMs), ...args]);
    // Long streams, all stopped once each has its first event: every slot was taken while all of them ran.
    let allStarted: () => void = () => {};
    const stop = new Promise<void>((r) => (allStarted = r));
    const started = new Set<number>();
    await Promise.all(
      Array.from({ length: streams }, (_, i) =>
        stream(`${em.url}/generate`, generateBody(4, 100_000), { "x-request-id": `s${i}` }, Infinity, stop, () => {
          started.add(i);
          if (started.size === streams) allStarted();
        }),
      ),
    );
    await em.stop();
    const raw = em.rawTruth();
    expect(raw).toHaveLength(streams);
    const firsts = raw.map((l) => ({ receivedMs: l.received_ms as number, dueMs: (l.events_due_ms as number[])[0]! }));
    for (const f of firsts) {
      // Never earlier than receipt + TTFT, never a whole period later.
      expect(f.dueMs - f.receivedMs).toBeGreaterThanOrEqual(ttftMs - STAMP_MS);
      expect(f.dueMs - f.receivedMs).toBeLessThan(ttftMs + itlMs);
    }
    const base = Math.min(...firsts.map((f) => f.dueMs));
    return firsts.map((f) => (((f.dueMs - base) % itlMs) + itlMs) % itlMs);
  }

  test("streams that arrive together get events due at least the gap apart", async () => {
    const ph = (await phases(["--min-gap-us", "500"], 8, 2, 10)).sort((a, b) => a - b);
    // 20 slots of 0.5 ms for 8 streams: all apart, the circular gap included.
    ph.forEach((p, i) => {
      const next = i + 1 < ph.length ? ph[i + 1]! : ph[0]! + 10;
      expect(next - p).toBeGreaterThanOrEqual(0.5 - STAMP_MS);
    });
  }, 30_000);

  test("more streams than slots share the least-held slots", async () => {
    // 3 slots (itl 3 ms, gap 1 ms) for 5 streams: 2, 2 and 1.
    const ph = await phases(["--min-gap-us", "1000"], 5, 2, 3);
    const bySlot = new Map<number, number>();
    for (const p of ph) {
      const slot = Math.round(p) % 3;
      expect(Math.abs(p - Math.round(p))).toBeLessThanOrEqual(STAMP_MS);
      bySlot.set(slot, (bySlot.get(slot) ?? 0) + 1);
    }
    expect([...bySlot.values()].sort()).toEqual([1, 2, 2]);
  }, 30_000);
});

describe("OpenAI /v1/completions through the emitter", () => {
  test("text deltas with usage on every chunk, a usage chunk, then [DONE]", async () => {
    const em = await startEmitter(["--ttft-ms", "1", "--itl-ms", "2", "--model-name", "m-1"]);
    const body = {
      model: "m-1",
      prompt: [1, 2, 3],
      max_tokens: 4,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true, continuous_usage_stats: true },
      ignore_eos: true,
    };
    const got = await stream(`${em.url}/v1/completions`, body, { "x-request-id": "oa" });
    const stats = await em.stats();
    await em.stop();
    const payloads = got.events.map((e) => e.payload);
    expect(payloads.at(-1)).toBe("[DONE]");
    const chunks = payloads.slice(0, -1).map(
      (p) =>
        JSON.parse(p) as {
          id: string;
          model: string;
          choices: Array<{ text: string; finish_reason: string | null }>;
          usage?: { completion_tokens: number; prompt_tokens: number; total_tokens: number; prompt_tokens_details?: { cached_tokens: number } };
        },
    );
    expect(chunks).toHaveLength(5);
    chunks.slice(0, 4).forEach((c, i) => {
      expect(c.id).toBe("cmpl-oa");
      expect(c.model).toBe("m-1");
      expect(c.choices[0]!.text).toBe(word(i));
      expect(c.choices[0]!.finish_reason).toBe(i === 3 ? "length" : null);
      expect(c.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 + i + 1, completion_tokens: i + 1 });
    });
    expect(chunks[4]).toMatchObject({ choices: [], usage: { completion_tokens: 4, prompt_tokens: 3, prompt_tokens_details: { cached_tokens: 0 } } });
    expect(stats.completionsRequests).toBe(1);
    expect(em.truth()[0]).toMatchObject({ requestId: "oa", rid: "cmpl-oa", promptTokens: 3, eventsTokens: [1, 2, 3, 4] });
  }, 30_000);
});

describe("the other endpoints and HTTP/1.1", () => {
  test("what warmbench's preflight and the Python script ask for", async () => {
    const em = await startEmitter([]);
    const get = (path: string, method = "GET") => fetch(`${em.url}${path}`, { method });
    expect((await get("/generate")).status).toBe(405);
    const info = (await (await get("/server_info")).json()) as Record<string, unknown>;
    expect(info).toMatchObject({ page_size: 1, incremental_streaming_output: true });
    expect((await get("/flush_cache", "POST")).status).toBe(200);
    expect(await (await get("/reset_prefix_cache", "POST")).json()).toEqual({ success: true });
    expect((await get("/health")).status).toBe(200);
    expect(((await (await get("/v1/models")).json()) as { data: Array<{ id: string }> }).data[0]!.id).toBe("emitter-model");
    expect(await (await get("/metrics")).text()).toContain('sglang:prompt_tokens_total{model_name="emitter-model"} 0.0');
    expect((await get("/nope")).status).toBe(404);
    await em.stop();
  });

  test("pipelined requests and a body split across packets on one keep-alive connection", async () => {
    const em = await startEmitter([]);
    const { port } = new URL(em.url);
    const text = await new Promise<string>((resolveText, reject) => {
      const sock = connect(Number(port), "127.0.0.1");
      let seen = "";
      const body = '{"max_new_tokens": 1}';
      sock.on("connect", () => {
        sock.write(`GET /health HTTP/1.1\r\nhost: x\r\n\r\nPOST /flush_cache HTTP/1.1\r\nhost: x\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 5)}`);
        setTimeout(() => sock.write(`${body.slice(5)}GET /nope HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`), 50);
      });
      sock.on("data", (d) => (seen += d.toString()));
      sock.on("end", () => resolveText(seen));
      sock.on("error", reject);
    });
    await em.stop();
    // Three answers in order, and the server closed the connection after the one that asked for it.
    expect([...text.matchAll(/^HTTP\/1\.1 (\d+)/gm)].map((m) => m[1])).toEqual(["200", "200", "404"]);
  });

  test("Expect: 100-continue is answered before the body is sent", async () => {
    const em = await startEmitter(["--ttft-ms", "1", "--itl-ms", "1"]);
    const { port } = new URL(em.url);
    const body = JSON.stringify(generateBody(3, 1));
    const text = await new Promise<string>((resolveText, reject) => {
      const sock = connect(Number(port), "127.0.0.1");
      let seen = "";
      sock.on("connect", () =>
        sock.write(`POST /generate HTTP/1.1\r\nhost: x\r\nexpect: 100-continue\r\nconnection: close\r\ncontent-length: ${body.length}\r\n\r\n`),
      );
      sock.on("data", (d) => {
        // The body goes out only once the server asked for it.
        if (seen === "" && d.toString().startsWith("HTTP/1.1 100 Continue\r\n\r\n")) sock.write(body);
        seen += d.toString();
      });
      sock.on("end", () => resolveText(seen));
      sock.on("error", reject);
    });
    await em.stop();
    expect(text.startsWith("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n")).toBe(true);
    expect(text).toContain('"prompt_tokens":3');
    expect(text).toContain("data: [DONE]");
  });

  test("a bad flag exits 2 with a message", async () => {
    const proc = Bun.spawn([bin, "--itl-ms", "zero"], { stderr: "pipe" });
    expect(await proc.exited).toBe(2);
    expect(await new Response(proc.stderr).text()).toContain("--itl-ms");
  });
});
