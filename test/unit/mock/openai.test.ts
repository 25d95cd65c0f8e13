/** vLLM-style /v1/completions, /reset_prefix_cache and /metrics over real HTTP. */
import { describe, expect, test } from "bun:test";
import type { MockServer } from "../../../src/mock/server.ts";
import { genBody, ids, post, start, streamPayloads } from "./mock-http.ts";

type Chunk = {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: Array<{ index: number; text: string; logprobs: null; finish_reason: string | null; stop_reason: null }>;
  usage?: Record<string, unknown>;
};

const complete = (server: MockServer, body: Record<string, unknown>, headers: Record<string, string> = {}) => post(server, body, "/v1/completions", headers);

async function chunks(server: MockServer, body: Record<string, unknown>): Promise<Chunk[]> {
  const payloads = await streamPayloads(await complete(server, { ...body, stream: true }));
  expect(payloads.at(-1)).toBe("[DONE]");
  return payloads.slice(0, -1).map((p) => JSON.parse(p) as Chunk);
}

describe("/v1/completions", () => {
  test("streamed chunks: text deltas, finish_reason on the last, then the usage chunk with cached tokens", async () => {
    const server = await start({ pageSize: 16, modelName: "org/m" });
    await chunks(server, { prompt: ids(40), max_tokens: 1 }); // warm the first 32 tokens (2 pages)
    const got = await chunks(server, {
      model: "org/m",
      prompt: [...ids(40), 5, 6],
      max_tokens: 5,
      stream_options: { include_usage: true },
    });
    expect(got.length).toBe(6);
    const content = got.slice(0, 5);
    for (const c of content) {
      expect(Object.keys(c)).toEqual(["id", "object", "created", "model", "choices"]);
      expect(Object.keys(c.choices[0]!)).toEqual(["index", "text", "logprobs", "finish_reason", "stop_reason"]);
      expect(c).toMatchObject({ object: "text_completion", model: "org/m", id: got[0]!.id });
    }
    expect(got[0]!.id).toMatch(/^cmpl-[0-9a-f]{32}$/);
    expect(content.map((c) => c.choices[0]!.finish_reason)).toEqual([null, null, null, null, "length"]);
    expect(got[5]).toEqual({
      id: got[0]!.id,
      object: "text_completion",
      created: got[0]!.created,
      model: "org/m",
      choices: [],
      usage: { prompt_tokens: 42, total_tokens: 47, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 32 } },
    });
    const streamedText = content.map((c) => c.choices[0]!.text).join("");
    const whole = (await (await complete(server, { prompt: [...ids(40), 5, 6], max_tokens: 5 })).json()) as Chunk;
    expect(whole.choices[0]).toEqual({ index: 0, text: streamedText, logprobs: null, finish_reason: "length", stop_reason: null });
    expect(whole.usage).toEqual({ prompt_tokens: 42, total_tokens: 47, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 32 } });
    expect(streamedText).toContain("猫");
  });

  test("continuous_usage_stats puts usage on every chunk; without include_usage there is no usage chunk", async () => {
    const server = await start();
    const got = await chunks(server, { prompt: ids(10), max_tokens: 3, stream_options: { continuous_usage_stats: true } });
    expect(got.map((c) => c.usage)).toEqual([1, 2, 3].map((c) => ({ prompt_tokens: 10, total_tokens: 10 + c, completion_tokens: c })));
    const plain = await chunks(server, { prompt: ids(10, 500), stream: true });
    expect(plain.length).toBe(16); // max_tokens defaults to 16
    expect(plain.every((c) => c.usage === undefined && c.choices.length === 1)).toBe(true);
  });

  test("headers arrive before the first token; X-Request-Id names the request", async () => {
    const server = await start({ ttftBaseMs: 500 });
    const t0 = performance.now();
    const res = await complete(server, { prompt: ids(5), max_tokens: 2, stream: true }, { "x-request-id": "abc" });
    const headersMs = performance.now() - t0;
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const payloads = await streamPayloads(res);
    expect(performance.now() - t0 - headersMs).toBeGreaterThan(250);
    expect((JSON.parse(payloads[0]!) as Chunk).id).toBe("cmpl-abc");
  });

  test("vLLM's errors: unknown model 404, string prompt, stream_options without stream, vocabulary, context", async () => {
    const server = await start({ modelName: "served", vocabSize: 1000, contextLength: 100 });
    const missing = await complete(server, { model: "other", prompt: ids(3) });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: { message: "The model `other` does not exist.", type: "NotFoundError", param: "model", code: 404 } });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ prompt: "hello" }, "mock needs token ids"],
      [{ prompt: ["hello"] }, "mock needs token ids"],
      [{ prompt: ids(3), stream_options: { include_usage: true } }, "stream=True"],
      [{ prompt: ids(3), stream: false, stream_options: { include_usage: true } }, "stream=True"],
      [{ prompt: [1, 1000] }, "Token id 1000 is out of vocabulary"],
      [{ prompt: [1, -2] }, "non-negative"],
      [{ prompt: [] }, "empty"],
      [{ prompt: ids(90), max_tokens: 20 }, "maximum context length is 100 tokens"],
      [{ prompt: ids(3), max_tokens: 0 }, "max_tokens"],
    ];
    for (const [body, message] of cases) {
      const res = await complete(server, body);
      expect(res.status).toBe(400);
      const err = (await res.json()) as { error: { message: string; type: string; code: number } };
      expect(err.error).toMatchObject({ type: "BadRequestError", code: 400 });
      expect(err.error.message).toContain(message);
    }
    expect(server.stats()).toMatchObject({ completionsRequests: cases.length + 1, running: 0 });
    expect((await complete(server, { model: "served", prompt: ids(90), max_tokens: 10 })).status).toBe(200);
  });

  test("faults: an InternalServerError event, an abort finish_reason, a reset", async () => {
    const errors = await start({ errorEventEvery: 1 });
    const errPayloads = await streamPayloads(await complete(errors, { prompt: ids(5), max_tokens: 5, stream: true }));
    expect(errPayloads.length).toBe(4);
    expect(JSON.parse(errPayloads[2]!)).toEqual({ error: { message: "mock: injected error", type: "InternalServerError", param: null, code: 500 } });
    expect((await complete(errors, { prompt: ids(5), max_tokens: 5 })).status).toBe(500);

    const aborts = await start({ abortEvery: 1 });
    const got = await chunks(aborts, { prompt: ids(5), max_tokens: 5, stream_options: { include_usage: true } });
    expect(got.map((c) => c.choices[0]?.finish_reason)).toEqual([null, null, "abort"]);

    const resets = await start({ resetEvery: 1 });
    const res = await complete(resets, { prompt: ids(5), max_tokens: 5, stream: true });
    await expect(res.text()).rejects.toThrow();
  });
});

describe("/reset_prefix_cache", () => {
  test("clears the cache when idle, reports success false while busy, 404 without dev mode", async () => {
    const server = await start({ itlMs: 20 });
    await streamPayloads(await post(server, genBody(ids(30), 1)));
    expect(server.stats().cacheTokens).toBe(30);
    const running = post(server, genBody(ids(5, 200), 15)).then((r) => r.text());
    await Bun.sleep(60);
    const busy = await fetch(server.url + "/reset_prefix_cache", { method: "POST" });
    expect(busy.status).toBe(200);
    expect(await busy.json()).toEqual({ success: false });
    await running;
    expect(await (await fetch(server.url + "/reset_prefix_cache", { method: "POST" })).json()).toEqual({ success: true });
    expect(server.stats()).toMatchObject({ cacheTokens: 0, flushes: 1, flushRejected: 1 });
    expect((await fetch(server.url + "/reset_prefix_cache")).status).toBe(405);

    const plain = await start({ noDevMode: true });
    const res = await fetch(plain.url + "/reset_prefix_cache", { method: "POST" });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ detail: "Not Found" });
  });
});

describe("/metrics", () => {
  /** Sample values by metric name (labels ignored), checking HELP/TYPE lines precede each. */
  async function scrape(server: MockServer): Promise<Map<string, number>> {
    const res = await fetch(server.url + "/metrics");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/plain");
    const values = new Map<string, number>();
    const typed = new Set<string>();
    for (const line of (await res.text()).trimEnd().split("\n")) {
      const type = /^# TYPE (\S+) (counter|gauge)$/.exec(line);
      if (type) typed.add(type[1]!);
      if (line.startsWith("#")) continue;
      const sample = /^([a-z_:]+)\{([^}]*)\} (\S+)$/.exec(line);
      expect(sample).not.toBeNull();
      expect(typed.has(sample![1]!)).toBe(true);
      values.set(sample![1]!, Number(sample![3]));
    }
    return values;
  }

  test("SGLang and vLLM prefix-cache counters, warm requests included", async () => {
    const server = await start();
    const before = await scrape(server);
    expect(before.get("sglang:prompt_tokens_total")).toBe(0);
    await streamPayloads(await post(server, genBody(ids(50), 1)));
    await streamPayloads(await post(server, genBody([...ids(50), 1, 2], 4)));
    await complete(server, { prompt: [...ids(50), 3], max_tokens: 2 }).then((r) => r.json());
    const m = await scrape(server);
    expect(m.get("sglang:prompt_tokens_total")).toBe(50 + 52 + 51);
    expect(m.get("sglang:cached_tokens_total")).toBe(0 + 50 + 50);
    expect(m.get("sglang:generation_tokens_total")).toBe(1 + 4 + 2);
    expect(m.get("vllm:prefix_cache_queries_total")).toBe(153);
    expect(m.get("vllm:prefix_cache_hits_total")).toBe(100);
    expect(m.get("vllm:prompt_tokens_total")).toBe(153);
    const text = await (await fetch(server.url + "/metrics")).text();
    expect(text).toContain('sglang:cached_tokens_total{cache_source="device",model_name="mock-model"} 100.0');
  });

  test("--no-metrics: 404, as SGLang without --enable-metrics", async () => {
    const server = await start({ noMetrics: true });
    expect((await fetch(server.url + "/metrics")).status).toBe(404);
  });
});
