/**
 * The llama.cpp `llama-server` facts that warmbench's llamacpp backend relies on, checked against the real server
 * (release v0.5.0, built by test/engines/llamacpp/build.sh) with 1 and with 4 slots: how it identifies itself, where
 * streaming usage and cached tokens are reported, the per-slot prompt cache, slot erase, and the host-RAM prompt
 * cache that survives an erase. Prompts are token ids, tiny, with 1–3 output tokens.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { skipWithoutLlamaBuild, startLlamaServer, type LlamaServer, type LlamaServerOptions } from "../helpers/llama-server.ts";

const skip = skipWithoutLlamaBuild();

const N_VOCAB = 128_256;
const PREFIX_TOKENS = 64;
const SUFFIX_TOKENS = 16;

/** Deterministic token ids in [1000, 101000): ordinary BPE tokens, far from the special ids (≥ 128000). */
function tokenIds(seed: number, count: number): number[] {
  let state = seed;
  return Array.from({ length: count }, () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return 1000 + (state % 100_000);
  });
}
const PREFIX = tokenIds(1, PREFIX_TOKENS);
const withSuffix = (seed: number): number[] => [...PREFIX, ...tokenIds(1000 + seed, SUFFIX_TOKENS)];

interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
}
interface Timings {
  cache_n: number;
  prompt_n: number;
  prompt_ms: number;
  predicted_n: number;
  predicted_ms: number;
}
interface Chunk {
  id: string;
  object: string;
  system_fingerprint?: string;
  choices: { index: number; text?: string; logprobs?: unknown; delta?: { role?: string; content?: string | null }; finish_reason: string | null }[];
  usage?: Usage;
  timings?: Timings;
}
interface Streamed {
  status: number;
  contentType: string | null;
  /** Parsed `data: {...}` events, in order. */
  chunks: Chunk[];
  /** Whether `data: [DONE]` ended the stream. */
  done: boolean;
  body: string;
}

// llama-server closes the connection after every streamed response although it answered `Keep-Alive` (see the
// "connection" test below), so a pooled connection can be reset under the next request: never reuse one here.
async function post(server: LlamaServer, path: string, body?: unknown): Promise<Response> {
  return fetch(server.url + path, {
    method: "POST",
    keepalive: false,
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function getJson<T>(server: LlamaServer, path: string): Promise<T> {
  const res = await fetch(server.url + path, { keepalive: false });
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}

async function stream(server: LlamaServer, path: string, body: Record<string, unknown>): Promise<Streamed> {
  const res = await post(server, path, { stream: true, ...body });
  const text = await res.text();
  const chunks: Chunk[] = [];
  let done = false;
  for (const line of text.split("\n")) {
    if (!line.startsWith("data: ")) continue;
    const payload = line.slice("data: ".length);
    if (payload === "[DONE]") done = true;
    else chunks.push(JSON.parse(payload) as Chunk);
  }
  return { status: res.status, contentType: res.headers.get("content-type"), chunks, done, body: text };
}

/** Streams `prompt` (token ids) through /v1/completions and returns the final chunk, which carries usage + timings. */
async function complete(server: LlamaServer, prompt: number[], extra: Record<string, unknown> = {}): Promise<Chunk> {
  const s = await stream(server, "/v1/completions", {
    prompt,
    max_tokens: 1,
    temperature: 0,
    ignore_eos: true,
    cache_prompt: true,
    ...extra,
  });
  expect(s.status).toBe(200);
  expect(s.done).toBe(true);
  return s.chunks.at(-1)!;
}

const cachedTokens = (chunk: Chunk): number | undefined => chunk.usage?.prompt_tokens_details?.cached_tokens;

async function erase(server: LlamaServer, slot: number): Promise<{ status: number; json: unknown }> {
  const res = await post(server, `/slots/${slot}?action=erase`);
  return { status: res.status, json: await res.json() };
}

function withServer(options: Partial<LlamaServerOptions>): () => LlamaServer {
  let server: LlamaServer | undefined;
  // Hooks in a skipped describe would still be listed as skipped "(unnamed)" tests.
  if (skip) return () => server!;
  beforeAll(async () => {
    server = await startLlamaServer(options);
  });
  afterAll(async () => {
    await server?.stop();
  });
  return () => server!;
}

describe.skipIf(skip)("llama-server, 1 slot, --cache-ram 0, --metrics", () => {
  const server = withServer({ slots: 1, cacheRam: false, metrics: true });

  test("identifies itself as llama.cpp: Server header, /props build_info and total_slots, /v1/models owned_by", async () => {
    const res = await fetch(`${server().url}/props`, { keepalive: false });
    expect(res.headers.get("server")).toBe("llama.cpp");
    const props = (await res.json()) as Record<string, unknown>;
    expect(props.build_info).toBe("b1-de3ff81");
    expect(props.total_slots).toBe(1);
    expect(props.default_generation_settings).toMatchObject({ n_ctx: 1024 });
    expect(props.model_path).toEndWith("tiny-llama3tok.gguf");
    const models = await getJson<{ data: { id: string; owned_by: string; meta: Record<string, number> }[] }>(server(), "/v1/models");
    expect(models.data).toHaveLength(1);
    expect(models.data[0]!.owned_by).toBe("llamacpp");
    expect(models.data[0]!.id).toEndWith("tiny-llama3tok.gguf");
    expect(models.data[0]!.meta).toMatchObject({ n_vocab: N_VOCAB, n_ctx: 1024, n_ctx_train: 8192 });
    // SGLang's endpoints are absent, so a SGLang backend pointed here fails fast.
    expect((await post(server(), "/generate", {})).status).toBe(404);
    expect((await fetch(`${server().url}/server_info`, { keepalive: false })).status).toBe(404);
  });

  test("GET /slots lists the one slot; an empty slot shows only id, n_ctx, speculative, is_processing", async () => {
    await erase(server(), 0);
    const slots = await getJson<Record<string, unknown>[]>(server(), "/slots");
    expect(slots).toEqual([{ id: 0, n_ctx: 1024, speculative: false, is_processing: false }]);
  });

  test("streamed /v1/completions with token ids: text chunks, usage + timings in the finish chunk, [DONE]", async () => {
    await erase(server(), 0);
    const prompt = withSuffix(1);
    const s = await stream(server(), "/v1/completions", {
      prompt,
      max_tokens: 3,
      temperature: 0,
      ignore_eos: true,
      cache_prompt: true,
      stream_options: { include_usage: true },
    });
    expect(s.status).toBe(200);
    expect(s.contentType).toBe("text/event-stream");
    expect(s.done).toBe(true);
    const last = s.chunks.at(-1)!;
    expect(last.object).toBe("text_completion");
    expect(last.id).toStartWith("chatcmpl-");
    expect(last.system_fingerprint).toBe("b1-de3ff81");
    expect(last.choices).toEqual([{ text: "", index: 0, logprobs: null, finish_reason: "length" }]);
    // No separate usage chunk with empty choices (unlike OpenAI): usage rides on the finish chunk.
    expect(s.chunks.every((c) => c.choices.length === 1)).toBe(true);
    expect(s.chunks.slice(0, -1).every((c) => c.usage === undefined && c.choices[0]!.finish_reason === null)).toBe(true);
    // At most one chunk per token: a token ending inside a UTF-8 character is held back and sent with the next.
    expect(s.chunks.length - 1).toBeLessThanOrEqual(3);
    // Token ids are used as sent: no BOS added.
    expect(last.usage).toEqual({
      prompt_tokens: prompt.length,
      completion_tokens: 3,
      total_tokens: prompt.length + 3,
      prompt_tokens_details: { cached_tokens: 0 },
    });
    expect(last.timings).toMatchObject({ cache_n: 0, prompt_n: prompt.length, predicted_n: 3 });
    expect(last.timings!.prompt_ms).toBeGreaterThan(0);
  });

  test("usage comes without stream_options.include_usage; continuous_usage_stats is ignored (usage only at the end)", async () => {
    const plain = await stream(server(), "/v1/completions", { prompt: tokenIds(7, 8), max_tokens: 2, temperature: 0, ignore_eos: true });
    expect(plain.chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 8, completion_tokens: 2 });
    const continuous = await stream(server(), "/v1/completions", {
      prompt: tokenIds(8, 8),
      max_tokens: 3,
      temperature: 0,
      ignore_eos: true,
      stream_options: { include_usage: true, continuous_usage_stats: true },
    });
    expect(continuous.chunks.filter((c) => c.usage !== undefined)).toHaveLength(1);
    expect(continuous.chunks.at(-1)!.usage).toMatchObject({ completion_tokens: 3 });
  });

  test("a repeated prefix on the slot is cached token-exactly; an identical prompt reports n − 1", async () => {
    await erase(server(), 0);
    expect(cachedTokens(await complete(server(), withSuffix(1)))).toBe(0);
    const hit = await complete(server(), withSuffix(2));
    expect(cachedTokens(hit)).toBe(PREFIX_TOKENS);
    expect(hit.timings).toMatchObject({ cache_n: PREFIX_TOKENS, prompt_n: SUFFIX_TOKENS });
    const same = await complete(server(), withSuffix(2));
    expect(cachedTokens(same)).toBe(PREFIX_TOKENS + SUFFIX_TOKENS - 1);
    expect(same.timings).toMatchObject({ cache_n: PREFIX_TOKENS + SUFFIX_TOKENS - 1, prompt_n: 1 });
    // cache_prompt: false recomputes everything for that request.
    expect(cachedTokens(await complete(server(), withSuffix(2), { cache_prompt: false }))).toBe(0);
  });

  test("erase empties the slot: n_erased is prompt + generated − 1, and the prefix is computed again", async () => {
    await erase(server(), 0);
    await complete(server(), withSuffix(3), { max_tokens: 2 });
    expect(await erase(server(), 0)).toEqual({ status: 200, json: { id_slot: 0, n_erased: PREFIX_TOKENS + SUFFIX_TOKENS + 1 } });
    expect(await erase(server(), 0)).toEqual({ status: 200, json: { id_slot: 0, n_erased: 0 } });
    expect(cachedTokens(await complete(server(), withSuffix(4)))).toBe(0);
  });

  test("without the host-RAM cache, a prefix pushed out of the slot is gone (with or without an erase)", async () => {
    await erase(server(), 0);
    await complete(server(), withSuffix(5));
    await complete(server(), tokenIds(500, 80));
    expect(cachedTokens(await complete(server(), withSuffix(6)))).toBe(0);
    await complete(server(), tokenIds(501, 80));
    await erase(server(), 0);
    expect(cachedTokens(await complete(server(), withSuffix(7)))).toBe(0);
  });

  test("/metrics: prompt_tokens_total counts computed tokens, prompt_tokens_cached_total the cached ones", async () => {
    const read = async (): Promise<Map<string, number>> => {
      const text = await (await fetch(`${server().url}/metrics`, { keepalive: false })).text();
      return new Map([...text.matchAll(/^(llamacpp:\w+) (\S+)$/gm)].map((m) => [m[1]!, Number(m[2])]));
    };
    await erase(server(), 0);
    await complete(server(), withSuffix(8));
    const before = await read();
    const hit = await complete(server(), withSuffix(9), { max_tokens: 2 });
    const after = await read();
    const delta = (name: string): number => after.get(name)! - before.get(name)!;
    expect(delta("llamacpp:prompt_tokens_total")).toBe(hit.timings!.prompt_n);
    expect(delta("llamacpp:prompt_tokens_cached_total")).toBe(hit.timings!.cache_n);
    expect(delta("llamacpp:tokens_predicted_total")).toBe(2);
    expect(after.get("llamacpp:requests_processing")).toBe(0);
    expect(after.has("llamacpp:requests_deferred")).toBe(true);
  });

  test("bad prompts are plain JSON errors, even with stream: true", async () => {
    const invalid = await post(server(), "/v1/completions", { prompt: [1000, N_VOCAB], max_tokens: 1, stream: true });
    expect(invalid.status).toBe(400);
    expect(await invalid.json()).toEqual({ error: { code: 400, message: "Prompt contains invalid tokens", type: "invalid_request_error" } });
    const tooLong = await post(server(), "/v1/completions", { prompt: tokenIds(9, 1100), max_tokens: 1, stream: true });
    expect(tooLong.status).toBe(400);
    expect(tooLong.headers.get("content-type")).toStartWith("application/json");
    expect(await tooLong.json()).toMatchObject({ error: { code: 400, type: "exceed_context_size_error", n_prompt_tokens: 1100, n_ctx: 1024 } });
  });

  test("/v1/chat/completions streams a role chunk, delta chunks, a finish chunk, then a usage chunk with choices []", async () => {
    const messages = [{ role: "user", content: "Hello" }];
    const s = await stream(server(), "/v1/chat/completions", {
      messages,
      max_tokens: 3,
      temperature: 0,
      ignore_eos: true,
      stream_options: { include_usage: true },
    });
    expect(s.status).toBe(200);
    expect(s.done).toBe(true);
    expect(s.chunks.every((c) => c.object === "chat.completion.chunk")).toBe(true);
    expect(s.chunks[0]!.choices[0]!.delta).toEqual({ role: "assistant", content: null });
    const usageChunk = s.chunks.at(-1)!;
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage).toMatchObject({ completion_tokens: 3 });
    expect(usageChunk.timings).toMatchObject({ predicted_n: 3 });
    expect(s.chunks.at(-2)!.choices[0]).toMatchObject({ finish_reason: "length", delta: {} });
    const deltas = s.chunks.slice(1, -2);
    expect(deltas.length).toBeGreaterThanOrEqual(1);
    expect(deltas.length).toBeLessThanOrEqual(3);
    expect(deltas.every((c) => typeof c.choices[0]!.delta!.content === "string")).toBe(true);
    // Without include_usage there is no usage at all, but the finish chunk still carries timings.
    const noUsage = await stream(server(), "/v1/chat/completions", { messages, max_tokens: 2, temperature: 0, ignore_eos: true });
    expect(noUsage.chunks.some((c) => c.usage !== undefined)).toBe(false);
    expect(noUsage.chunks.at(-1)!.choices[0]!.finish_reason).toBe("length");
    expect(noUsage.chunks.at(-1)!.timings).toMatchObject({ predicted_n: 2 });
  });

  test("connection: closed by the server after a streamed response (despite Keep-Alive), kept after a plain one", async () => {
    const port = Number(new URL(server().url).port);
    // It closes at once; 3 s of grace stays below its Keep-Alive timeout of 5 s, which would close it anyway.
    const streamed = await rawExchange(port, { prompt: [1000, 2000, 3000], max_tokens: 1, stream: true }, 3000);
    expect(streamed.head).toMatch(/\r\nKeep-Alive: timeout=5, max=100\r\n/);
    expect(streamed.head).not.toMatch(/\r\nConnection: close/i);
    expect(streamed.closedByServer).toBe(true);
    const plain = await rawExchange(port, { prompt: [1000, 2000, 3000], max_tokens: 1, stream: false }, 1000);
    expect(plain.head).toStartWith("HTTP/1.1 200");
    expect(plain.closedByServer).toBe(false);
  });
});

describe.skipIf(skip)("llama-server, 4 slots, --cache-ram 0", () => {
  const server = withServer({ slots: 4, cacheRam: false });
  const eraseAll = async (): Promise<void> => {
    for (let slot = 0; slot < 4; slot++) expect((await erase(server(), slot)).status).toBe(200);
  };

  test("/props total_slots is 4 and GET /slots lists slots 0..3, each with n_ctx = -c / -np", async () => {
    const props = await getJson<{ total_slots: number; default_generation_settings: { n_ctx: number } }>(server(), "/props");
    expect(props.total_slots).toBe(4);
    expect(props.default_generation_settings.n_ctx).toBe(1024);
    const slots = await getJson<{ id: number; n_ctx: number; is_processing: boolean }[]>(server(), "/slots");
    expect(slots.map((s) => [s.id, s.n_ctx, s.is_processing])).toEqual([0, 1, 2, 3].map((id) => [id, 1024, false]));
  });

  test("the cache is per slot: id_slot pins a request, and only the slot holding the prefix hits", async () => {
    await eraseAll();
    expect(cachedTokens(await complete(server(), PREFIX, { id_slot: 0 }))).toBe(0);
    expect(cachedTokens(await complete(server(), withSuffix(1), { id_slot: 1 }))).toBe(0);
    expect(cachedTokens(await complete(server(), withSuffix(2), { id_slot: 0 }))).toBe(PREFIX_TOKENS);
    const slots = await getJson<{ id: number; id_task?: number; n_prompt_tokens?: number }[]>(server(), "/slots");
    expect(slots.filter((s) => s.id_task !== undefined).map((s) => s.id)).toEqual([0, 1]);
  });

  test("a prefix warmed into every slot (id_slot 0..3) is hit by 4 concurrent requests", async () => {
    await eraseAll();
    for (let slot = 0; slot < 4; slot++) {
      // Each slot computes the prefix itself: no slot copies another's cache (the RAM cache is off).
      expect(cachedTokens(await complete(server(), PREFIX, { id_slot: slot }))).toBe(0);
    }
    const finals = await Promise.all([10, 11, 12, 13].map((seed) => complete(server(), withSuffix(seed))));
    expect(finals.map(cachedTokens)).toEqual([PREFIX_TOKENS, PREFIX_TOKENS, PREFIX_TOKENS, PREFIX_TOKENS]);
  });

  test("erasing every slot makes the server cold; slot ids wrap modulo the slot count", async () => {
    await complete(server(), withSuffix(20), { id_slot: 3 });
    expect(await erase(server(), 7)).toEqual({ status: 200, json: { id_slot: 7, n_erased: PREFIX_TOKENS + SUFFIX_TOKENS } });
    await complete(server(), withSuffix(21));
    await eraseAll();
    const slots = await getJson<Record<string, unknown>[]>(server(), "/slots");
    expect(slots.every((s) => s.is_processing === false)).toBe(true);
    expect(cachedTokens(await complete(server(), withSuffix(22)))).toBe(0);
  });
});

describe.skipIf(skip)("llama-server, 1 slot, host-RAM prompt cache on (llama.cpp's default --cache-ram)", () => {
  const server = withServer({ slots: 1, cacheRam: true });

  test("an erase right after a request clears it: the RAM copy is made only when another task takes the slot", async () => {
    await complete(server(), withSuffix(1), { max_tokens: 2 });
    expect((await erase(server(), 0)).json).toEqual({ id_slot: 0, n_erased: PREFIX_TOKENS + SUFFIX_TOKENS + 1 });
    expect(cachedTokens(await complete(server(), withSuffix(2)))).toBe(0);
  });

  test("a prefix pushed out of the slot survives in RAM, and an erase of the slot does not clear it", async () => {
    await complete(server(), withSuffix(3));
    await complete(server(), tokenIds(500, 80)); // takes the slot: the prefix's state is copied to RAM
    expect(cachedTokens(await complete(server(), withSuffix(4)))).toBe(PREFIX_TOKENS);
    await complete(server(), tokenIds(501, 80));
    await erase(server(), 0);
    expect(cachedTokens(await complete(server(), withSuffix(5)))).toBe(PREFIX_TOKENS);
  });
});

describe.skipIf(skip)("llama-server without --slot-save-path", () => {
  const server = withServer({ slots: 1, slotSavePath: false });

  test("slot erase answers 501 not_supported_error", async () => {
    expect(await erase(server(), 0)).toEqual({
      status: 501,
      json: { error: { code: 501, message: "This server does not support slots action. Start it with `--slot-save-path`", type: "not_supported_error" } },
    });
  });
});

/** One HTTP/1.1 POST /v1/completions on a raw socket; then whether the server closed the connection within a grace. */
async function rawExchange(port: number, body: Record<string, unknown>, closeGraceMs: number): Promise<{ head: string; closedByServer: boolean }> {
  const payload = JSON.stringify(body);
  const socket = connect(port, "127.0.0.1");
  let received = "";
  let closed = false;
  socket.on("data", (d: Buffer) => {
    received += d.toString("utf8");
  });
  socket.on("end", () => {
    closed = true;
  });
  socket.on("error", () => {
    closed = true;
  });
  socket.write(
    `POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`,
  );
  const complete = (): boolean => {
    const split = received.indexOf("\r\n\r\n");
    if (split < 0) return false;
    const head = received.slice(0, split);
    const rest = received.slice(split + 4);
    const length = /\r\nContent-Length: (\d+)/i.exec(head);
    return length ? Buffer.byteLength(rest) >= Number(length[1]) : rest.endsWith("\r\n0\r\n\r\n");
  };
  const deadline = Date.now() + 30_000;
  while (!complete() && !closed && Date.now() < deadline) await Bun.sleep(5);
  expect(complete()).toBe(true);
  const graceEnd = Date.now() + closeGraceMs;
  while (!closed && Date.now() < graceEnd) await Bun.sleep(5);
  socket.destroy();
  return { head: received.slice(0, received.indexOf("\r\n\r\n") + 2), closedByServer: closed };
}
