/** The mock's wire format against real HTTP: stream shape, text modes, errors, info endpoints. */
import { afterEach, describe, expect, test } from "bun:test";
import { mockOptions, type MockOptions } from "../../../src/mock/options.ts";
import { startMockServer, type MockServer } from "../../../src/mock/server.ts";

const servers: MockServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

async function start(overrides: Partial<MockOptions> = {}): Promise<MockServer> {
  const server = await startMockServer(mockOptions({ port: 0, ttftBaseMs: 1, prefillUsPerToken: 0, itlMs: 1, ...overrides }));
  servers.push(server);
  return server;
}

function post(server: MockServer, body: unknown, path = "/generate"): Promise<Response> {
  return fetch(server.url + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

/** Raw `data: ` payloads of a whole SSE body, checking the exact framing on the way. */
function splitEvents(raw: string): string[] {
  expect(raw.endsWith("\n\n")).toBe(true);
  const events = raw.slice(0, -2).split("\n\n");
  for (const event of events) expect(event.startsWith("data: ")).toBe(true);
  return events.map((event) => event.slice("data: ".length));
}

type Event = { text: string; output_ids: number[]; meta_info: Record<string, unknown> };

async function streamEvents(server: MockServer, body: Record<string, unknown>): Promise<Event[]> {
  const res = await post(server, { ...body, stream: true });
  expect(res.status).toBe(200);
  const payloads = splitEvents(await res.text());
  expect(payloads.at(-1)).toBe("[DONE]");
  return payloads.slice(0, -1).map((p) => {
    expect(JSON.stringify(JSON.parse(p))).toBe(p); // compact JSON, nothing else
    return JSON.parse(p) as Event;
  });
}

const ids = (n: number, start = 10): number[] => Array.from({ length: n }, (_, i) => start + i);

describe("streaming /generate", () => {
  test("event shape, key order and meta_info of a short request", async () => {
    const server = await start();
    const events = await streamEvents(server, { input_ids: ids(5), sampling_params: { max_new_tokens: 3, temperature: 0 }, rid: "r-1" });
    expect(events.length).toBe(3);
    const baseKeys = [
      "id",
      "finish_reason",
      "prompt_tokens",
      "weight_version",
      "num_retractions",
      "reasoning_tokens",
      "completion_tokens",
      "cached_tokens",
      "cached_tokens_details",
    ];
    expect(Object.keys(events[0]!)).toEqual(["text", "output_ids", "meta_info"]);
    expect(Object.keys(events[0]!.meta_info)).toEqual([...baseKeys, "response_sent_to_client_ts"]);
    expect(Object.keys(events[1]!.meta_info)).toEqual(baseKeys);
    expect(Object.keys(events[2]!.meta_info)).toEqual([...baseKeys, "e2e_latency"]);
    const first = events[0]!.meta_info;
    expect(first.id).toBe("r-1");
    expect(first.prompt_tokens).toBe(5);
    expect(first.weight_version).toBe("default");
    expect(first.num_retractions).toBe(0);
    expect(first.reasoning_tokens).toBe(0);
    expect(first.cached_tokens).toBe(0);
    expect(first.cached_tokens_details).toBeNull();
    expect(Math.abs((first.response_sent_to_client_ts as number) - Date.now() / 1000)).toBeLessThan(60);
    expect(events.map((e) => e.meta_info.completion_tokens)).toEqual([1, 2, 3]);
    expect(events.map((e) => e.meta_info.finish_reason)).toEqual([null, null, { type: "length", length: 3 }]);
    expect(events[2]!.meta_info.e2e_latency as number).toBeGreaterThan(0);
  });

  test("headers arrive at once, long before the first token", async () => {
    const server = await start({ ttftBaseMs: 600 });
    const t0 = performance.now();
    const res = await post(server, { input_ids: ids(5), sampling_params: { max_new_tokens: 1 }, stream: true });
    const headersMs = performance.now() - t0;
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    await res.body!.getReader().read();
    const firstEventMs = performance.now() - t0;
    expect(firstEventMs - headersMs).toBeGreaterThan(250);
  });

  test("cumulative text and output_ids by default, one event per stream_interval tokens", async () => {
    const server = await start({ streamInterval: 3 });
    const events = await streamEvents(server, { input_ids: ids(4), sampling_params: { max_new_tokens: 8 } });
    expect(events.map((e) => e.meta_info.completion_tokens)).toEqual([1, 4, 7, 8]);
    for (const e of events) expect(e.output_ids.length).toBe(e.meta_info.completion_tokens as number);
    for (let i = 1; i < events.length; i++) expect(events[i]!.text.startsWith(events[i - 1]!.text)).toBe(true);
    const final = events.at(-1)!;
    expect(new Set(final.output_ids).size).toBe(8); // distinct tokens, so a client mixing them up would show
    expect(final.text).toContain("café");
    expect(final.text).toContain("猫");
  });

  test("incremental mode sends deltas that add up to the cumulative result", async () => {
    const cumulative = await streamEvents(await start({ streamInterval: 3 }), { input_ids: ids(4), sampling_params: { max_new_tokens: 8 } });
    const server = await start({ streamInterval: 3, incremental: true });
    const deltas = await streamEvents(server, { input_ids: ids(4), sampling_params: { max_new_tokens: 8 } });
    expect(deltas.map((e) => e.output_ids.length)).toEqual([1, 3, 3, 1]);
    expect(deltas.map((e) => e.meta_info.completion_tokens)).toEqual([1, 4, 7, 8]);
    expect(deltas.map((e) => e.text).join("")).toBe(cumulative.at(-1)!.text);
    expect(deltas.flatMap((e) => e.output_ids)).toEqual(cumulative.at(-1)!.output_ids);
    const info = (await (await fetch(server.url + "/server_info")).json()) as Record<string, unknown>;
    expect(info.incremental_streaming_output).toBe(true);
  });

  test("a per-request stream_interval overrides the server's", async () => {
    const server = await start({ streamInterval: 1 });
    const events = await streamEvents(server, { input_ids: ids(4), sampling_params: { max_new_tokens: 5, stream_interval: 2 } });
    expect(events.map((e) => e.meta_info.completion_tokens)).toEqual([1, 3, 5]);
  });
});

describe("non-streaming /generate", () => {
  test("one JSON object like the final event, with SGLang's defaults", async () => {
    const server = await start({ itlMs: 0, recordInputs: true });
    const streamed = await streamEvents(server, { input_ids: ids(6), sampling_params: { max_new_tokens: 128 } });
    const res = await fetch(server.url + "/generate", { method: "PUT", body: JSON.stringify({ input_ids: ids(6) }) });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("application/json");
    const body = (await res.json()) as Event;
    expect(Object.keys(body)).toEqual(["text", "output_ids", "meta_info"]);
    expect(body.meta_info.completion_tokens).toBe(128); // max_new_tokens defaults to 128; the mock never stops early
    expect(body.meta_info.finish_reason).toEqual({ type: "length", length: 128 });
    expect(body.text).toBe(streamed.at(-1)!.text);
    expect(body.output_ids).toEqual(streamed.at(-1)!.output_ids);
    expect(Object.keys(body.meta_info).slice(-2)).toEqual(["e2e_latency", "response_sent_to_client_ts"]);
    expect(body.meta_info.id as string).toMatch(/^[0-9a-f]{32}$/);
    const received = (await (await fetch(server.url + "/mock/received")).json()) as Array<Record<string, unknown>>;
    expect(received[1]).toEqual({
      rid: body.meta_info.id,
      inputIds: ids(6),
      maxNewTokens: 128,
      temperature: 1,
      ignoreEos: false,
      stream: false,
      cachedTokens: 5,
    });
  });
});

describe("errors", () => {
  const badRequestShape = { object: "error", type: "Bad Request", param: null, code: 400 };

  test("input_ids that are not non-negative ints below the vocabulary -> 400", async () => {
    const server = await start({ vocabSize: 1000 });
    for (const inputIds of [[1, -1], [1, 2.5], ["a"], [1, 1000], [[1, 2]], "12", []]) {
      for (const stream of [false, true]) {
        const res = await post(server, { input_ids: inputIds, stream });
        expect(res.status).toBe(400);
        const body = (await res.json()) as Record<string, unknown>;
        expect(body).toMatchObject(badRequestShape);
        expect(typeof body.message).toBe("string");
      }
    }
    expect((await post(server, { input_ids: [0, 999], sampling_params: { max_new_tokens: 1 } })).status).toBe(200);
  });

  test("text prompts, bad JSON and unknown sampling keys -> 400", async () => {
    const server = await start();
    const text = await post(server, { text: "hello", stream: true });
    expect(text.status).toBe(400);
    expect(((await text.json()) as { message: string }).message).toContain("input_ids");
    const badJson = await fetch(server.url + "/generate", { method: "POST", body: "{not json" });
    expect(badJson.status).toBe(400);
    expect(await badJson.json()).toMatchObject(badRequestShape);
    const unknownKey = await post(server, { input_ids: ids(3), sampling_params: { max_tokens: 5 } });
    expect(unknownKey.status).toBe(400);
  });

  test("no input at all is a ValueError: 400 without streaming, error event when streaming", async () => {
    const server = await start();
    const plain = await post(server, { sampling_params: { max_new_tokens: 1 } });
    expect(plain.status).toBe(400);
    expect(await plain.json()).toEqual({ error: { message: "Either text, input_ids or input_embeds should be provided." } });
    const streamed = await post(server, { stream: true });
    expect(streamed.status).toBe(200);
    expect(splitEvents(await streamed.text()).at(-1)).toBe("[DONE]");
  });

  test("prompt + max_new_tokens over the context length", async () => {
    const server = await start({ contextLength: 100 });
    const res = await post(server, { input_ids: ids(90), sampling_params: { max_new_tokens: 20 }, stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const payloads = splitEvents(await res.text());
    expect(payloads.length).toBe(2);
    expect(payloads[1]).toBe("[DONE]");
    const event = JSON.parse(payloads[0]!) as { error: Record<string, unknown> };
    expect(Object.keys(event.error)).toEqual(["message", "type", "code", "retryable"]);
    expect(event.error.message).toStartWith(
      "Requested token count exceeds the model's maximum context length of 100 tokens. You requested a total of 110 tokens",
    );
    expect(event.error).toMatchObject({ type: "invalid_request_error", code: 400, retryable: false });

    const plain = await post(server, { input_ids: ids(90), sampling_params: { max_new_tokens: 20 } });
    expect(plain.status).toBe(400);
    const body = (await plain.json()) as { error: { message: string } };
    expect(Object.keys(body.error)).toEqual(["message"]);
    expect(body.error.message).toContain("maximum context length of 100 tokens");
    expect((await post(server, { input_ids: ids(90), sampling_params: { max_new_tokens: 10 } })).status).toBe(200);
  });

  test("a prompt at max_req_input_len is aborted by the scheduler: abort finish_reason, no error key", async () => {
    const server = await start({ contextLength: 50, cacheTokens: 10 });
    const res = await post(server, { input_ids: ids(49), sampling_params: { max_new_tokens: 1 }, stream: true });
    expect(res.status).toBe(200);
    const payloads = splitEvents(await res.text());
    expect(payloads[1]).toBe("[DONE]");
    const event = JSON.parse(payloads[0]!) as Event;
    expect(event.text).toBe("");
    expect(event.meta_info.completion_tokens).toBe(0);
    expect(event.meta_info.finish_reason).toMatchObject({ type: "abort", status_code: 400, err_type: "BadRequestError" });
    expect((await post(server, { input_ids: ids(48), sampling_params: { max_new_tokens: 1 } })).status).toBe(200);
  });

  test("a duplicate live rid is rejected", async () => {
    const server = await start({ itlMs: 20 });
    const first = post(server, { input_ids: ids(3), sampling_params: { max_new_tokens: 20 }, rid: "same" });
    await Bun.sleep(50);
    const second = await post(server, { input_ids: ids(3), sampling_params: { max_new_tokens: 1 }, rid: "same" });
    expect(second.status).toBe(400);
    expect(((await second.json()) as { error: { message: string } }).error.message).toBe("Duplicate request ID detected: same");
    expect((await first).status).toBe(200);
  });

  test("unknown routes and wrong methods", async () => {
    const server = await start();
    const missing = await fetch(server.url + "/v1/embeddings", { method: "POST", body: "{}" });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ detail: "Not Found" });
    expect((await fetch(server.url + "/generate")).status).toBe(405);
    expect((await fetch(server.url + "/mock/received")).status).toBe(404); // recordInputs is off
  });
});

describe("info endpoints", () => {
  test("/server_info and /get_server_info", async () => {
    const server = await start({ pageSize: 16, cacheTokens: 5000, contextLength: 8192, streamInterval: 2, maxRunning: 7, modelName: "m" });
    for (const path of ["/server_info", "/get_server_info"]) {
      const info = (await (await fetch(server.url + path)).json()) as Record<string, unknown>;
      expect(info).toMatchObject({
        context_length: 8192,
        page_size: 16,
        disable_radix_cache: false,
        enable_cache_report: false,
        incremental_streaming_output: false,
        stream_interval: 2,
        served_model_name: "m",
        max_total_num_tokens: 5000,
        max_req_input_len: 8191,
        max_running_requests: 7,
        version: "0.5.17-mock",
        status: "ready",
      });
    }
  });

  test("/model_info, /v1/models and /health", async () => {
    const server = await start({ modelName: "org/model", contextLength: 4096 });
    for (const path of ["/model_info", "/get_model_info"]) {
      const info = (await (await fetch(server.url + path)).json()) as Record<string, unknown>;
      expect(info).toEqual({
        model_path: "org/model",
        tokenizer_path: "org/model",
        is_generation: true,
        preferred_sampling_params: null,
        weight_version: "default",
        has_image_understanding: false,
        has_audio_understanding: false,
        model_type: "mock",
        architectures: ["MockForCausalLM"],
      });
    }
    const models = (await (await fetch(server.url + "/v1/models")).json()) as { object: string; data: Array<Record<string, unknown>> };
    expect(models.object).toBe("list");
    expect(models.data).toEqual([
      { id: "org/model", object: "model", created: expect.any(Number), owned_by: "sglang", root: "org/model", parent: null, max_model_len: 4096 },
    ]);
    expect((await fetch(server.url + "/v1/models/nope")).status).toBe(404);
    for (const path of ["/health", "/health_generate"]) {
      const res = await fetch(server.url + path);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe("");
    }
  });
});
