import { afterEach, describe, expect, test } from "bun:test";
import { buildBody } from "../../../src/backends/body.ts";
import { backendFor } from "../../../src/backends/index.ts";
import { createOpenaiBodyTemplate, discoverModel, openaiBackend, resetPrefixCache } from "../../../src/backends/openai.ts";
import { sglangBackend } from "../../../src/backends/sglang.ts";
import { BenchError } from "../../../src/errors.ts";
import type { TestServer } from "../../helpers/stream-servers.ts";
import { closedPortUrl, startSequenceServer } from "../../helpers/stream-servers.ts";

const servers: TestServer[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.stop();
});
function use(server: TestServer): TestServer {
  servers.push(server);
  return server;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const noSleep = async (): Promise<void> => {};

function bodyText(p: Parameters<typeof createOpenaiBodyTemplate>[0], prefix = "1,2", suffix = "3"): string {
  return decoder.decode(buildBody(createOpenaiBodyTemplate(p), encoder.encode(prefix), encoder.encode(suffix)));
}

describe("OpenAI body template", () => {
  const base = { maxNewTokens: 200, ignoreEos: true, extra: {}, model: "org/m" };

  test("key order and values", () => {
    expect(bodyText(base)).toBe(
      '{"model":"org/m","prompt":[1,2,3],"max_tokens":200,"temperature":0,"stream":true,' +
        '"stream_options":{"include_usage":true,"continuous_usage_stats":true},"ignore_eos":true}',
    );
  });

  test("a null model is left out; ignore_eos false is sent", () => {
    const parsed = JSON.parse(bodyText({ ...base, model: null, ignoreEos: false })) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual(["prompt", "max_tokens", "temperature", "stream", "stream_options", "ignore_eos"]);
    expect(parsed.ignore_eos).toBe(false);
  });

  test("extra keys override in place (Python dict merge) and new keys go last", () => {
    const text = bodyText({ ...base, extra: { temperature: 0.7, top_k: 5, model: "other" } });
    const parsed = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual(["model", "prompt", "max_tokens", "temperature", "stream", "stream_options", "ignore_eos", "top_k"]);
    expect(parsed).toMatchObject({ model: "other", temperature: 0.7, top_k: 5, prompt: [1, 2, 3] });
  });

  test("extra replacing the prompt sends the body as is", () => {
    const t = createOpenaiBodyTemplate({ ...base, extra: { prompt: "hi" } });
    expect(t.idsOverridden).toBe(true);
    const parsed = JSON.parse(decoder.decode(buildBody(t, encoder.encode("1"), encoder.encode("2")))) as Record<string, unknown>;
    expect(parsed.prompt).toBe("hi");
  });

  test("empty prefix or suffix: no stray comma", () => {
    expect(JSON.parse(bodyText(base, "", "3")).prompt).toEqual([3]);
    expect(JSON.parse(bodyText(base, "1,2", "")).prompt).toEqual([1, 2]);
  });
});

/** A control target without credentials or interrupt. */
const ctl = (baseUrl: string) => ({ baseUrl, headers: {} });

describe("resetPrefixCache (vLLM POST /reset_prefix_cache)", () => {
  const opts = { deadlineS: 5, serverTimeoutS: 1, sleep: noSleep };

  test('{"success": true} at once, with our headers', async () => {
    const server = use(startSequenceServer([{ status: 200, body: '{"success":true}' }]));
    const result = await resetPrefixCache({ baseUrl: server.url, headers: { authorization: "Bearer k" } }, opts);
    expect(result).toEqual({ attempts: 1 });
    expect(server.requests).toEqual(["POST /reset_prefix_cache?reset_external=true"]);
    expect(server.headers[0]?.authorization).toBe("Bearer k");
  });

  test("success:false is retried with backoff until true", async () => {
    const server = use(
      startSequenceServer([
        { status: 200, body: '{"success":false}' },
        { status: 200, body: '{"success": false}' },
        { status: 200, body: '{"success": true}' },
      ]),
    );
    const slept: number[] = [];
    const result = await resetPrefixCache(ctl(server.url), { ...opts, sleep: async (ms) => void slept.push(ms) });
    expect(result).toEqual({ attempts: 3 });
    expect(slept).toEqual([100, 200]);
    expect(server.requests.length).toBe(3);
  });

  test("success:false until the deadline is a BenchError", async () => {
    const server = use(startSequenceServer([{ status: 200, body: '{"success":false}' }]));
    const run = resetPrefixCache(ctl(server.url), { deadlineS: 0.3, serverTimeoutS: 1, sleep: (ms) => Bun.sleep(ms) });
    await expect(run).rejects.toThrow(/kept answering \{"success": false\} for 0.3s \(\d+ attempts\)/);
    await run.catch(() => {});
    expect(server.requests.length).toBeGreaterThanOrEqual(2);
  });

  test("an empty 200 body (old vLLM) is success", async () => {
    const server = use(startSequenceServer([{ status: 200, body: "" }]));
    expect(await resetPrefixCache(ctl(server.url), opts)).toEqual({ attempts: 1 });
  });

  test("404: dev mode is off, a clear BenchError without retry", async () => {
    const server = use(startSequenceServer([{ status: 404, body: '{"detail":"Not Found"}' }]));
    const err = await resetPrefixCache(ctl(server.url), opts).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BenchError);
    expect((err as Error).message).toBe(
      "POST /reset_prefix_cache answered 404: the server needs VLLM_SERVER_DEV_MODE=1 to reset its prefix cache (or use --flush none)",
    );
    expect(server.requests.length).toBe(1);
  });

  test("another status fails at once with the body", async () => {
    const server = use(startSequenceServer([{ status: 500, body: "boom" }]));
    await expect(resetPrefixCache(ctl(server.url), opts)).rejects.toThrow("POST /reset_prefix_cache answered 500: boom");
  });

  test("an unreachable server", async () => {
    const url = closedPortUrl().replace("/generate", "");
    await expect(resetPrefixCache(ctl(url), opts)).rejects.toThrow(`cannot reach the server at ${url}`);
  });
});

describe("discoverModel (GET /v1/models)", () => {
  test("the first data[].id, with our headers", async () => {
    const models = { object: "list", data: [{ id: "Qwen/Qwen3-0.6B", object: "model" }, { id: "lora-a" }] };
    const server = use(startSequenceServer([{ status: 200, body: JSON.stringify(models) }]));
    expect(await discoverModel({ baseUrl: server.url, headers: { authorization: "Bearer k" } })).toBe("Qwen/Qwen3-0.6B");
    expect(server.requests).toEqual(["GET /v1/models"]);
    expect(server.headers[0]?.authorization).toBe("Bearer k");
  });

  test("no model listed, not JSON, or an error status: BenchError asking for --model", async () => {
    for (const canned of [
      { status: 200, body: '{"object":"list","data":[]}' },
      { status: 200, body: '{"data":[{"object":"model"}]}' },
      { status: 200, body: "<html>" },
      { status: 401, body: '{"error":"Unauthorized"}' },
    ]) {
      const server = use(startSequenceServer([canned]));
      const err = await discoverModel(ctl(server.url)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BenchError);
      expect((err as Error).message).toContain("(pass --served-model-name)");
    }
  });

  test("the status and body are in the message", async () => {
    const server = use(startSequenceServer([{ status: 401, body: '{"error":"Unauthorized"}' }]));
    await expect(discoverModel(ctl(server.url))).rejects.toThrow('GET /v1/models answered 401: {"error":"Unauthorized"} (pass --served-model-name)');
  });
});

describe("backendFor", () => {
  test("names; vllm is the OpenAI wire under vLLM's name (the pct line's backend)", () => {
    expect(backendFor("sglang")).toBe(sglangBackend);
    expect(backendFor("openai")).toBe(openaiBackend);
    expect(backendFor("vllm")).toBe(backendFor("vllm", "completions"));
    expect(backendFor("vllm")).toMatchObject({ name: "vllm", engine: "vllm", generatePath: "/v1/completions", deltaText: true });
    expect(backendFor("vllm").scanEvent).toBe(openaiBackend.scanEvent);
    expect(backendFor("vllm").flush).toBeDefined();
    expect(openaiBackend).toMatchObject({ name: "openai", generatePath: "/v1/completions", deltaText: true, promptEncoding: "token_ids" });
    expect(sglangBackend).toMatchObject({ name: "sglang", generatePath: "/generate", deltaText: false, promptEncoding: "token_ids" });
  });

  test("endpoints: chat for every engine, SGLang's /generate only for SGLang", () => {
    expect(backendFor("sglang", "chat")).toMatchObject({ name: "sglang", endpoint: "chat", generatePath: "/v1/chat/completions", promptEncoding: "text" });
    expect(backendFor("sglang", "completions")).toMatchObject({ engine: "sglang", generatePath: "/v1/completions", deltaText: true });
    expect(backendFor("llamacpp", "chat")).toMatchObject({ engine: "llama.cpp", generatePath: "/v1/chat/completions" });
    expect(backendFor("llamacpp")).toMatchObject({ name: "llamacpp", endpoint: "completions", promptEncoding: "token_ids" });
    expect(() => backendFor("vllm", "generate")).toThrow("vllm has no SGLang-native /generate endpoint");
    expect(() => backendFor("llamacpp", "generate")).toThrow("llama.cpp has no SGLang-native /generate endpoint");
  });
});
