import { afterEach, describe, expect, test } from "bun:test";
import type { StreamRequest } from "../../../src/client/stream-request.ts";
import { errorText, isConnectError } from "../../../src/client/fetch-errors.ts";
import { resolveGeneratedText } from "../../../src/client/stream-events.ts";
import { streamRequest } from "../../../src/client/stream.ts";
import { openaiBackend } from "../../../src/backends/openai.ts";
import { backendFor } from "../../../src/backends/index.ts";
import type { TestServer } from "../../helpers/stream-servers.ts";
import {
  closedPortUrl,
  DONE_LINE,
  openaiChunkLine,
  openaiUsageLine,
  sglangEventLine,
  startEndlessServer,
  startScriptedServer,
  startStatusServer,
} from "../../helpers/stream-servers.ts";

const servers: TestServer[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.stop();
});
function use(server: TestServer): TestServer {
  servers.push(server);
  return server;
}

const BODY = new TextEncoder().encode(JSON.stringify({ input_ids: [1, 2, 3], stream: true }));

function request(url: string, overrides: Partial<StreamRequest> = {}): StreamRequest {
  return {
    url,
    body: BODY,
    index: 7,
    promptLen: 3,
    maxNewTokens: 4,
    textMode: "cumulative",
    requestTimeoutMs: 10_000,
    stallTimeoutMs: 5_000,
    ...overrides,
  };
}

const event = (text: string, completionTokens: number, finish: Record<string, unknown> | null = null) =>
  sglangEventLine({ text, completionTokens, cachedTokens: 2, finish });
const chunk = (text: string, completionTokens: number) => openaiChunkLine({ text, completionTokens });

describe("streamRequest: successful streams", () => {
  test("cumulative stream: TTFT at the first token event, one ITL per token, text of the last event", async () => {
    const server = use(
      startScriptedServer([
        { afterMs: 150, raw: event(" The", 1) },
        { afterMs: 60, raw: event(" The cat", 2) },
        { afterMs: 60, raw: event(" The cat sat", 3) },
        { afterMs: 60, raw: event(" The cat sat on", 4, { type: "length", length: 4 }) },
        { afterMs: 0, raw: DONE_LINE },
      ]),
    );
    const rec = await streamRequest(request(server.url));
    expect(rec).toMatchObject({
      ok: true,
      failureKind: null,
      httpStatus: 200,
      index: 7,
      promptLen: 3,
      outputLen: 4,
      cachedTokens: 2,
      tokenEvents: 4,
      finishReason: "length",
      generatedText: " The cat sat on",
    });
    expect(rec.ttftMs).toBeGreaterThanOrEqual(140);
    expect(rec.ttftMs).toBeLessThan(1_000);
    expect(rec.itlMs.length).toBe(3);
    for (const itl of rec.itlMs) {
      expect(itl).toBeGreaterThanOrEqual(45);
      expect(itl).toBeLessThan(1_000);
    }
    expect(rec.latencyMs).toBeGreaterThanOrEqual(rec.ttftMs + 170);
    expect(rec.latencyMs).toBeLessThan(3_000);
    expect(rec.startMs).toBeGreaterThan(0);
    // The request went out as JSON with the pre-serialized body.
    expect(server.contentTypes[0]).toBe("application/json");
    expect(server.bodies[0]).toBe(new TextDecoder().decode(BODY));
  });

  test("an event carrying several tokens is spread into equal ITLs; zero-token events are skipped", async () => {
    const server = use(
      startScriptedServer([
        { afterMs: 20, raw: event("a", 1) },
        { afterMs: 40, raw: event("a", 1) }, // no new token: no ITL, no timestamp update
        { afterMs: 80, raw: event("abcd", 4) }, // 3 tokens after ~120 ms
        { afterMs: 0, raw: event("abcd", 4, { type: "stop", matched: 2 }) },
        { afterMs: 0, raw: DONE_LINE },
      ]),
    );
    // maxNewTokens 2 forces the ITL buffer to grow.
    const rec = await streamRequest(request(server.url, { maxNewTokens: 2 }));
    expect(rec.ok).toBe(true);
    expect(rec.outputLen).toBe(4);
    expect(rec.tokenEvents).toBe(2);
    expect(rec.finishReason).toBe("stop");
    expect(rec.itlMs.length).toBe(3);
    const [first, second, third] = rec.itlMs;
    expect(first).toBe(second as number);
    expect(second).toBe(third as number);
    // The gap runs from the first token event (not the zero-token one): ~120 ms / 3 tokens.
    expect(first as number).toBeGreaterThanOrEqual(35);
    expect(first as number).toBeLessThan(400);
  });

  test("multi-token events: each gap is divided by the tokens it carried, so the ITLs add up to last event − TTFT", async () => {
    const server = use(
      startScriptedServer([
        { afterMs: 20, raw: event("a", 1) },
        { afterMs: 90, raw: event("abcd", 4) }, // Δ = 3
        // Δ = 2, and [DONE] in the same write: latencyMs is this event's arrival time.
        { afterMs: 60, raw: event("abcdef", 6, { type: "length", length: 6 }) + DONE_LINE },
      ]),
    );
    const rec = await streamRequest(request(server.url, { maxNewTokens: 6 }));
    expect(rec).toMatchObject({ ok: true, outputLen: 6, tokenEvents: 3 });
    const itl = Array.from(rec.itlMs);
    expect(itl.length).toBe(5);
    const [first3, next2] = [itl.slice(0, 3), itl.slice(3)];
    expect(new Set(first3).size).toBe(1);
    expect(new Set(next2).size).toBe(1);
    // TTFT + 3 × (gap₁ / 3) + 2 × (gap₂ / 2) is the last token event's arrival, exactly where [DONE] arrived.
    const sum = itl.reduce((a, b) => a + b, 0);
    expect(rec.ttftMs + sum).toBeCloseTo(rec.latencyMs, 6);
  });

  test("incremental text is concatenated", async () => {
    const server = use(
      startScriptedServer([
        { afterMs: 10, raw: event("Hé", 1) },
        { afterMs: 10, raw: event(" 漢字", 2) },
        { afterMs: 10, raw: event(" 😀", 3, { type: "length", length: 3 }) },
        { afterMs: 0, raw: DONE_LINE },
      ]),
    );
    const rec = await streamRequest(request(server.url, { textMode: "incremental" }));
    expect(rec.ok).toBe(true);
    expect(rec.generatedText).toBe("Hé 漢字 😀");
    expect(rec.itlMs.length).toBe(2);
  });

  test("a first event with empty text but one token sets TTFT", async () => {
    const server = use(
      startScriptedServer([
        { afterMs: 30, raw: event("", 1) },
        { afterMs: 200, raw: event("é", 2, { type: "length", length: 2 }) },
        { afterMs: 0, raw: DONE_LINE },
      ]),
    );
    const rec = await streamRequest(request(server.url));
    expect(rec.ok).toBe(true);
    expect(rec.ttftMs).toBeGreaterThanOrEqual(25);
    expect(rec.ttftMs).toBeLessThan(200);
    expect(rec.itlMs.length).toBe(1);
    expect(rec.itlMs[0] as number).toBeGreaterThanOrEqual(150);
    expect(rec.generatedText).toBe("é");
  });
});

describe("streamRequest: failures inside a 200 stream", () => {
  test("error event", async () => {
    const server = use(
      startScriptedServer([
        { afterMs: 0, raw: `data: {"error":{"message":"context too long","code":400}}\n\n` },
        { afterMs: 0, raw: DONE_LINE },
      ]),
    );
    const rec = await streamRequest(request(server.url));
    expect(rec).toMatchObject({ ok: false, failureKind: "server_error", failureMessage: "context too long" });
    expect(rec.httpStatus).toBe(200);
  });

  test("abort finish after some tokens keeps what was measured", async () => {
    const server = use(
      startScriptedServer([
        { afterMs: 20, raw: event("a", 1) },
        { afterMs: 20, raw: event("ab", 2, { type: "abort", message: "Request running timeout reached.", status_code: 503 }) },
        { afterMs: 0, raw: DONE_LINE },
      ]),
    );
    const rec = await streamRequest(request(server.url));
    expect(rec).toMatchObject({
      ok: false,
      failureKind: "abort",
      failureMessage: "Request running timeout reached.",
      finishReason: "abort",
      outputLen: 1,
      tokenEvents: 1,
    });
    expect(rec.ttftMs).toBeGreaterThan(0);
  });

  test("stream closed before [DONE] is truncated", async () => {
    const server = use(startScriptedServer([{ afterMs: 10, raw: event("a", 1) }], "close"));
    const rec = await streamRequest(request(server.url));
    expect(rec).toMatchObject({ ok: false, failureKind: "truncated", outputLen: 1, failureMessage: "stream ended before [DONE]" });
    expect(rec.ttftMs).toBeGreaterThan(0);
  });

  test("socket destroyed mid-stream is a network failure", async () => {
    const server = use(startScriptedServer([{ afterMs: 10, raw: event("a", 1) }], "destroy"));
    const rec = await streamRequest(request(server.url));
    expect(rec).toMatchObject({ ok: false, failureKind: "network", httpStatus: 200, outputLen: 1 });
    expect(rec.failureMessage).toContain("ECONNRESET");
  });

  test("[DONE] without any token event", async () => {
    const server = use(
      startScriptedServer([
        { afterMs: 0, raw: event("", 0) },
        { afterMs: 0, raw: DONE_LINE },
      ]),
    );
    const rec = await streamRequest(request(server.url));
    expect(rec).toMatchObject({ ok: false, failureKind: "no_tokens", ttftMs: 0, tokenEvents: 0, failureMessage: "stream ended without any token" });
  });

  test("an event that is not JSON", async () => {
    const server = use(
      startScriptedServer([
        { afterMs: 0, raw: "data: {oops\n\n" },
        { afterMs: 0, raw: DONE_LINE },
      ]),
    );
    const rec = await streamRequest(request(server.url));
    expect(rec).toMatchObject({ ok: false, failureKind: "parse" });
  });
});

describe("streamRequest: failures before or around the stream", () => {
  test("HTTP 500 before streaming", async () => {
    const server = use(startStatusServer(500, `{"object":"error","message":"${"m".repeat(300)}"}`));
    const rec = await streamRequest(request(server.url));
    expect(rec).toMatchObject({ ok: false, failureKind: "http", httpStatus: 500 });
    expect(rec.failureMessage.startsWith(`HTTP 500: {"object":"error"`)).toBe(true);
    expect(rec.failureMessage.length).toBe("HTTP 500: ".length + 200);
  });

  test("connection refused", async () => {
    const rec = await streamRequest(request(closedPortUrl()));
    expect(rec).toMatchObject({ ok: false, failureKind: "connect", httpStatus: 0 });
    expect(rec.failureMessage).toContain("ECONNREFUSED");
  });

  test("stall: one event, then silence", async () => {
    const server = use(startScriptedServer([{ afterMs: 0, raw: event("a", 1) }], "hang"));
    const started = performance.now();
    const rec = await streamRequest(request(server.url, { stallTimeoutMs: 300 }));
    const tookMs = performance.now() - started;
    expect(rec).toMatchObject({ ok: false, failureKind: "stall", outputLen: 1, failureMessage: "no bytes for 300 ms" });
    expect(tookMs).toBeGreaterThanOrEqual(290);
    expect(tookMs).toBeLessThan(3_000);
  });

  test("bytes that keep flowing do not stall, but the request timeout ends it", async () => {
    const server = use(startEndlessServer(40));
    const started = performance.now();
    const rec = await streamRequest(request(server.url, { stallTimeoutMs: 250, requestTimeoutMs: 700, maxNewTokens: 1 }));
    const tookMs = performance.now() - started;
    expect(rec).toMatchObject({ ok: false, failureKind: "timeout", failureMessage: "request timeout after 700 ms" });
    expect(tookMs).toBeGreaterThanOrEqual(690);
    expect(tookMs).toBeLessThan(4_000);
    expect(rec.outputLen).toBeGreaterThan(3);
    expect(rec.itlMs.length).toBe(rec.outputLen - 1);
  });

  test("request timeout while waiting for headers", async () => {
    const server = use(startStatusServer(200, "late", 2_000));
    const rec = await streamRequest(request(server.url, { requestTimeoutMs: 200 }));
    expect(rec).toMatchObject({ ok: false, failureKind: "timeout", httpStatus: 0, failureMessage: "request timeout after 200 ms" });
  });

  test("external signal cancels a running request, and one aborted before start", async () => {
    const server = use(startScriptedServer([{ afterMs: 0, raw: event("a", 1) }], "hang"));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 150);
    const rec = await streamRequest(request(server.url, { signal: controller.signal }));
    expect(rec).toMatchObject({ ok: false, failureKind: "cancelled", outputLen: 1, failureMessage: "cancelled" });
    const again = await streamRequest(request(server.url, { signal: controller.signal }));
    expect(again).toMatchObject({ ok: false, failureKind: "cancelled", httpStatus: 0, failureMessage: "cancelled before start" });
    expect(again.startMs).toBeGreaterThan(0);
    expect(again.intendedMs).toBe(again.startMs);
  });
});

describe("streamRequest: chat streams", () => {
  const chatBackend = backendFor("llamacpp", "chat");
  const line = (payload: unknown) => `data: ${JSON.stringify(payload)}\n\n`;
  const delta = (d: unknown, finish: string | null = null) =>
    line({ object: "chat.completion.chunk", choices: [{ index: 0, delta: d, finish_reason: finish }] });

  test("the role chunk is no token: TTFT at the first content delta", async () => {
    const server = use(
      startScriptedServer([
        { afterMs: 0, raw: delta({ role: "assistant", content: "" }) },
        { afterMs: 120, raw: delta({ content: " the" }) },
        { afterMs: 20, raw: delta({ content: " cat" }) },
        { afterMs: 0, raw: delta({}, "length") },
        { afterMs: 0, raw: line({ choices: [], usage: { completion_tokens: 2, prompt_tokens: 5, prompt_tokens_details: { cached_tokens: 3 } } }) },
        { afterMs: 0, raw: DONE_LINE },
      ]),
    );
    const rec = await streamRequest(request(server.url, { backend: chatBackend }));
    expect(rec).toMatchObject({ ok: true, outputLen: 2, cachedTokens: 3, generatedText: " the cat", finishReason: "length", tokenEvents: 2 });
    expect(rec.ttftMs).toBeGreaterThanOrEqual(100);
    expect(rec.itlMs).toHaveLength(1);
  });

  test("a token held back to the usage chunk (half a character) is still the first token there", async () => {
    const server = use(
      startScriptedServer([
        { afterMs: 0, raw: delta({ role: "assistant", content: null }) },
        { afterMs: 80, raw: delta({}, "length") },
        { afterMs: 0, raw: line({ choices: [], usage: { completion_tokens: 1, prompt_tokens: 5 } }) },
        { afterMs: 0, raw: DONE_LINE },
      ]),
    );
    const rec = await streamRequest(request(server.url, { backend: chatBackend, maxNewTokens: 1 }));
    expect(rec).toMatchObject({ ok: true, outputLen: 1, tokenEvents: 1 });
    expect(rec.ttftMs).toBeGreaterThanOrEqual(60);
  });
});

describe("streamRequest: OpenAI /v1/completions streams", () => {
  const chunk = openaiChunkLine;
  const openai = (url: string, overrides: Partial<StreamRequest> = {}): StreamRequest =>
    // textMode "cumulative" on purpose: OpenAI text is always a delta, whatever the request says.
    request(url, { backend: openaiBackend, textMode: "cumulative", ...overrides });

  test("vLLM with continuous usage: TTFT, ITL spread over multi-token chunks, cached tokens, text deltas", async () => {
    const server = use(
      startScriptedServer([
        { afterMs: 120, raw: chunk({ text: "Hé", completionTokens: 1, cachedTokens: 32 }) },
        { afterMs: 60, raw: chunk({ text: " 漢字", completionTokens: 3, cachedTokens: 32 }) },
        { afterMs: 60, raw: chunk({ text: " 😀", completionTokens: 4, finish: "length", cachedTokens: 32 }) },
        { afterMs: 0, raw: openaiUsageLine(4, 32) },
        { afterMs: 0, raw: DONE_LINE },
      ]),
    );
    const rec = await streamRequest(openai(server.url));
    expect(rec).toMatchObject({
      ok: true,
      outputLen: 4,
      cachedTokens: 32,
      tokenEvents: 3,
      finishReason: "length",
      generatedText: "Hé 漢字 😀",
    });
    expect(rec.ttftMs).toBeGreaterThanOrEqual(110);
    expect(rec.ttftMs).toBeLessThan(1_000);
    expect(rec.itlMs.length).toBe(3);
    // The 2-token chunk's gap is split in two equal halves.
    expect(rec.itlMs[0]).toBe(rec.itlMs[1] as number);
    expect(rec.itlMs[0] as number).toBeGreaterThanOrEqual(20);
    expect(rec.itlMs[2] as number).toBeGreaterThanOrEqual(45);
    expect(rec.latencyMs).toBeGreaterThanOrEqual(rec.ttftMs + 110);
  });

  test("no usage per chunk: one token per chunk, the final usage chunk corrects outputLen", async () => {
    const server = use(
      startScriptedServer([
        { afterMs: 20, raw: chunk({ text: "a" }) },
        { afterMs: 20, raw: chunk({ text: "b" }) },
        { afterMs: 20, raw: chunk({ text: "c", finish: "length" }) },
        { afterMs: 20, raw: openaiUsageLine(6, 0) },
        { afterMs: 0, raw: DONE_LINE },
      ]),
    );
    const rec = await streamRequest(openai(server.url));
    expect(rec).toMatchObject({ ok: true, outputLen: 6, tokenEvents: 3, cachedTokens: 0, generatedText: "abc", finishReason: "length" });
    // ITL entries stay per chunk (the only timing known); the usage chunk adds none.
    expect(rec.itlMs.length).toBe(2);
  });

  test("no usage at all: outputLen is the chunk count and cached tokens stay unreported", async () => {
    const server = use(
      startScriptedServer([
        { afterMs: 10, raw: chunk({ text: "a" }) },
        { afterMs: 10, raw: chunk({ text: "b", finish: "stop" }) },
        { afterMs: 0, raw: DONE_LINE },
      ]),
    );
    const rec = await streamRequest(openai(server.url));
    expect(rec).toMatchObject({ ok: true, outputLen: 2, cachedTokens: -1, finishReason: "stop" });
  });

  test("a first chunk with empty text still sets TTFT", async () => {
    const server = use(
      startScriptedServer([
        { afterMs: 30, raw: chunk({ text: "" }) },
        { afterMs: 250, raw: chunk({ text: "x", finish: "length" }) },
        { afterMs: 0, raw: DONE_LINE },
      ]),
    );
    const rec = await streamRequest(openai(server.url));
    expect(rec.ok).toBe(true);
    expect(rec.ttftMs).toBeGreaterThanOrEqual(25);
    expect(rec.ttftMs).toBeLessThan(250);
    expect(rec.itlMs.length).toBe(1);
    expect(rec.itlMs[0] as number).toBeGreaterThanOrEqual(200);
    expect(rec.generatedText).toBe("x");
  });

  test("an error event after some tokens is a server_error", async () => {
    const server = use(
      startScriptedServer([
        { afterMs: 10, raw: chunk({ text: "a", completionTokens: 1 }) },
        { afterMs: 10, raw: `data: {"error":{"message":"Internal server error","type":"InternalServerError","param":null,"code":500}}\n\n` },
        { afterMs: 0, raw: DONE_LINE },
      ]),
    );
    const rec = await streamRequest(openai(server.url));
    expect(rec).toMatchObject({ ok: false, failureKind: "server_error", failureMessage: "Internal server error", outputLen: 1 });
  });

  test("finish_reason abort is an abort failure", async () => {
    const server = use(
      startScriptedServer([
        { afterMs: 10, raw: chunk({ text: "a", completionTokens: 1 }) },
        { afterMs: 10, raw: chunk({ text: "", completionTokens: 1, finish: "abort" }) },
        { afterMs: 0, raw: DONE_LINE },
      ]),
    );
    const rec = await streamRequest(openai(server.url));
    expect(rec).toMatchObject({ ok: false, failureKind: "abort", finishReason: "abort", failureMessage: 'finish_reason "abort"' });
  });

  test("only a usage chunk, then [DONE]: no tokens", async () => {
    const server = use(
      startScriptedServer([
        { afterMs: 0, raw: openaiUsageLine(0) },
        { afterMs: 0, raw: DONE_LINE },
      ]),
    );
    const rec = await streamRequest(openai(server.url));
    expect(rec).toMatchObject({ ok: false, failureKind: "no_tokens", outputLen: 0 });
  });
});

describe("streamRequest: a body given in parts", () => {
  const parts = (...texts: string[]) => texts.map((t) => new TextEncoder().encode(t));
  const streamed = () => startScriptedServer([{ afterMs: 0, raw: event("a", 1) + DONE_LINE }]);

  test("small parts and a single part go out as one plain body", async () => {
    const server = use(streamed());
    const several = parts('{"input_ids":[1,2,', "3],", '"stream":true}');
    expect((await streamRequest(request(server.url, { body: several }))).ok).toBe(true);
    expect((await streamRequest(request(server.url, { body: parts('{"one":"part"}') }))).ok).toBe(true);
    expect(server.bodies).toEqual(['{"input_ids":[1,2,3],"stream":true}', '{"one":"part"}']);
    for (const headers of server.headers) expect(headers["transfer-encoding"]).toBeUndefined();
    expect(server.headers.map((h) => h["content-length"])).toEqual(server.bodies.map((b) => String(b.length)));
  });

  test("parts over 64 KiB are streamed with an exact content-length, never chunked", async () => {
    const server = use(streamed());
    const big = "7,".repeat(40_000);
    const body = parts('{"input_ids":[', big, big, '1],"stream":true}');
    const length = body.reduce((n, p) => n + p.length, 0);
    expect(length).toBeGreaterThan(64 * 1024);
    expect((await streamRequest(request(server.url, { body }))).ok).toBe(true);
    expect(server.bodies).toEqual([`{"input_ids":[${big}${big}1],"stream":true}`]);
    expect(server.headers[0]?.["content-length"]).toBe(String(length));
    expect(server.headers[0]?.["transfer-encoding"]).toBeUndefined();
  });
});

describe("streamRequest: generated text", () => {
  /** Texts holding key patterns, escapes, multi-byte characters and an escaped surrogate pair split in two. */
  const TEXTS = [' "usage":{"completion_tokens":99}', ' "finish_reason":"abort" \\', 'q"\\"', " 漢字 😀", "\n\t", "\ud83d", "\ude00", ""];
  const openaiSteps = () => [
    ...TEXTS.map((text, k) => ({ afterMs: 5, raw: openaiChunkLine({ text, completionTokens: k + 1, cachedTokens: 16 }) })),
    { afterMs: 0, raw: openaiUsageLine(TEXTS.length, 16) },
    { afterMs: 0, raw: DONE_LINE },
  ];

  test("OpenAI deltas: exactly the concatenated texts, whatever they hold", async () => {
    const server = use(startScriptedServer(openaiSteps()));
    const rec = await streamRequest(request(server.url, { backend: openaiBackend, maxNewTokens: 2 }));
    expect(rec).toMatchObject({ ok: true, outputLen: TEXTS.length, generatedText: TEXTS.join("") });
    // The escaped surrogate halves of two chunks join into one character.
    expect(rec.generatedText.endsWith("\n\t😀")).toBe(true);
    expect("textBytes" in rec).toBe(false);
  });

  test("deferred: the record keeps one exact-size copy of the escaped text, no payload, until resolved", async () => {
    const server = use(startScriptedServer(openaiSteps()));
    const rec = await streamRequest(request(server.url, { backend: openaiBackend, deferText: true }));
    expect(rec.generatedText).toBe("");
    const bytes = rec.textBytes as Uint8Array;
    expect(bytes.buffer.byteLength).toBe(bytes.length);
    expect(new TextDecoder().decode(bytes)).toBe(TEXTS.map((t) => JSON.stringify(t).slice(1, -1)).join(""));
    expect(Object.keys(rec).filter((key) => key.toLowerCase().includes("payload"))).toEqual([]);
    resolveGeneratedText(rec);
    expect(rec.generatedText).toBe(TEXTS.join(""));
    expect("textBytes" in rec).toBe(false);
    // Resolving twice changes nothing.
    resolveGeneratedText(rec);
    expect(rec.generatedText).toBe(TEXTS.join(""));
  });

  test("an invalid escape in the text: the request still succeeds, with no text", async () => {
    const bad = `data: {"choices":[{"index":0,"text":"a\\xb","logprobs":null,"finish_reason":null}],"usage":{"completion_tokens":1}}\n\n`;
    const server = use(
      startScriptedServer([
        { afterMs: 0, raw: chunk("ok", 1) },
        { afterMs: 5, raw: bad },
        { afterMs: 0, raw: DONE_LINE },
      ]),
    );
    const rec = await streamRequest(request(server.url, { backend: openaiBackend }));
    expect(rec).toMatchObject({ ok: true, outputLen: 1, generatedText: "" });
  });

  test("SGLang cumulative: only the last event's text is kept", async () => {
    const server = use(
      startScriptedServer([
        { afterMs: 5, raw: event('"a', 1) },
        { afterMs: 5, raw: event('"a\\b', 2) },
        { afterMs: 5, raw: event('"a\\b 漢字', 3, { type: "length", length: 3 }) },
        { afterMs: 0, raw: DONE_LINE },
      ]),
    );
    const rec = await streamRequest(request(server.url, { textMode: "cumulative", deferText: true }));
    expect(new TextDecoder().decode(rec.textBytes)).toBe(JSON.stringify('"a\\b 漢字').slice(1, -1));
    resolveGeneratedText(rec);
    expect(rec.generatedText).toBe('"a\\b 漢字');
  });

  test("SGLang incremental: deltas in any key order, an event without text adds none", async () => {
    const late = (text: string, n: number) =>
      `data: ${JSON.stringify({ meta_info: { id: "t", finish_reason: null, prompt_tokens: 5, completion_tokens: n, cached_tokens: 2 }, text })}\n\n`;
    const server = use(
      startScriptedServer([
        { afterMs: 5, raw: event(' "text":"', 1) },
        { afterMs: 5, raw: late(" late\\", 2) },
        { afterMs: 5, raw: `data: {"output_ids":[9],"meta_info":{"id":"t","finish_reason":null,"completion_tokens":3}}\n\n` },
        { afterMs: 5, raw: event(" end", 4, { type: "length", length: 4 }) },
        { afterMs: 0, raw: DONE_LINE },
      ]),
    );
    const rec = await streamRequest(request(server.url, { textMode: "incremental" }));
    expect(rec).toMatchObject({ ok: true, outputLen: 4, generatedText: ' "text":" late\\ end' });
  });
});

describe("streamRequest: request headers", () => {
  test("custom headers and x-request-id are sent; content-type stays JSON", async () => {
    const server = use(
      startScriptedServer([
        { afterMs: 0, raw: event("a", 1) },
        { afterMs: 0, raw: DONE_LINE },
      ]),
    );
    const rec = await streamRequest(request(server.url, { headers: { authorization: "Bearer sk-1" }, requestId: "warm-3" }));
    expect(rec.ok).toBe(true);
    expect(server.headers[0]).toMatchObject({
      authorization: "Bearer sk-1",
      "x-request-id": "warm-3",
      "content-type": "application/json",
    });
  });

  test("no x-request-id unless asked", async () => {
    const server = use(
      startScriptedServer([
        { afterMs: 0, raw: event("a", 1) },
        { afterMs: 0, raw: DONE_LINE },
      ]),
    );
    await streamRequest(request(server.url));
    expect(server.headers[0]?.["x-request-id"]).toBeUndefined();
  });
});

/** One SGLang event line with the raw meta_info fields given. */
const metaLine = (text: string, meta: string) =>
  `data: {"text":${JSON.stringify(text)},"meta_info":{"id":"t","finish_reason":null,"prompt_tokens":5,${meta}}}\n\n`;

describe("streamRequest: what the record keeps", () => {
  test("a successful record has no failure message, and tiers stay unknown when the server reports none", async () => {
    const server = use(
      startScriptedServer([
        { afterMs: 0, raw: event("a", 1) },
        { afterMs: 0, raw: DONE_LINE },
      ]),
    );
    const rec = await streamRequest(request(server.url));
    expect(rec).toMatchObject({ ok: true, failureKind: null, failureMessage: "", cachedTokens: 2 });
    expect([rec.cachedDeviceTokens, rec.cachedHostTokens, rec.cachedStorageTokens]).toEqual([-1, -1, -1]);
    expect(rec.payloads).toBeUndefined();
  });

  test("cached tokens and tiers: the first report is the request's, 0 included", async () => {
    const server = use(
      startScriptedServer([
        { afterMs: 0, raw: metaLine("a", `"completion_tokens":1,"cached_tokens":0,"cached_tokens_details":{"device":0,"host":4}`) },
        { afterMs: 5, raw: metaLine("ab", `"completion_tokens":2,"cached_tokens":9,"cached_tokens_details":{"device":7,"host":1,"storage":2}`) },
        { afterMs: 0, raw: DONE_LINE },
      ]),
    );
    const rec = await streamRequest(request(server.url));
    expect(rec).toMatchObject({ ok: true, outputLen: 2, cachedTokens: 0 });
    expect([rec.cachedDeviceTokens, rec.cachedHostTokens, rec.cachedStorageTokens]).toEqual([0, 4, 0]);
  });

  test("null details: reported, nothing cached in any tier", async () => {
    const server = use(
      startScriptedServer([
        { afterMs: 0, raw: metaLine("a", `"completion_tokens":1,"cached_tokens":0,"cached_tokens_details":null`) },
        { afterMs: 0, raw: DONE_LINE },
      ]),
    );
    const rec = await streamRequest(request(server.url));
    expect([rec.cachedDeviceTokens, rec.cachedHostTokens, rec.cachedStorageTokens]).toEqual([0, 0, 0]);
  });

  test("more tokens than max_new_tokens: the ITL array grows and keeps every gap", async () => {
    const steps = [1, 2, 3, 4, 5, 6].map((n) => ({ afterMs: 15, raw: event("x".repeat(n), n) }));
    const server = use(startScriptedServer([...steps, { afterMs: 0, raw: DONE_LINE }]));
    const rec = await streamRequest(request(server.url, { maxNewTokens: 1 }));
    expect(rec).toMatchObject({ ok: true, outputLen: 6, tokenEvents: 6 });
    expect(rec.itlMs.length).toBe(5);
    // Under load two writes can arrive in one read (a gap near 0), but the server's five 15 ms waits cannot shrink.
    for (const gap of rec.itlMs) expect(gap).toBeGreaterThanOrEqual(0);
    const sum = rec.itlMs.reduce((a, b) => a + b, 0);
    expect(sum).toBeGreaterThanOrEqual(70);
    expect(sum).toBeCloseTo(rec.lastEventMs - rec.firstTokenMs, 6);
  });

  test("events after [DONE] are not measured", async () => {
    const server = use(
      startScriptedServer([
        { afterMs: 0, raw: event("a", 1) },
        { afterMs: 0, raw: DONE_LINE },
        { afterMs: 5, raw: event("ab", 2) },
        { afterMs: 0, raw: "data: {oops\n\n" },
      ]),
    );
    const rec = await streamRequest(request(server.url));
    expect(rec).toMatchObject({ ok: true, outputLen: 1, tokenEvents: 1 });
    expect(rec.itlMs.length).toBe(0);
  });

  test("keepPayloads: every token event's payload for delta text; the last one alone for cumulative text", async () => {
    const deltas = [event("a", 1), event("b", 2)];
    const incremental = use(startScriptedServer([...deltas.map((raw) => ({ afterMs: 0, raw })), { afterMs: 0, raw: DONE_LINE }]));
    const kept = await streamRequest(request(incremental.url, { textMode: "incremental", keepPayloads: true }));
    const payloadOf = (line: string) => line.slice("data: ".length).trimEnd();
    expect(kept.payloads!.map((p) => new TextDecoder().decode(p))).toEqual(deltas.map(payloadOf));

    const cumulative = use(
      startScriptedServer([
        { afterMs: 0, raw: event("a", 1) },
        { afterMs: 0, raw: event("ab", 2) },
        { afterMs: 0, raw: DONE_LINE },
      ]),
    );
    const last = await streamRequest(request(cumulative.url, { keepPayloads: true }));
    expect(last.payloads!.map((p) => new TextDecoder().decode(p))).toEqual([payloadOf(event("ab", 2))]);

    const none = use(startScriptedServer([{ afterMs: 0, raw: DONE_LINE }]));
    expect((await streamRequest(request(none.url, { keepPayloads: true }))).payloads).toEqual([]);
  });

  test("a usage chunk that reports 0 after counted chunks keeps the count", async () => {
    const server = use(
      startScriptedServer([
        { afterMs: 0, raw: openaiChunkLine({ text: "a" }) },
        { afterMs: 0, raw: openaiChunkLine({ text: "b" }) },
        { afterMs: 0, raw: openaiUsageLine(0) },
        { afterMs: 0, raw: DONE_LINE },
      ]),
    );
    const rec = await streamRequest(request(server.url, { backend: openaiBackend }));
    expect(rec).toMatchObject({ ok: true, outputLen: 2 });
  });
});

describe("connect errors and their one-line text", () => {
  test("every code of a connection never made is a connect error; others and code-less errors are not", () => {
    for (const code of [
      "ECONNREFUSED",
      "ConnectionRefused",
      "ENOTFOUND",
      "EHOSTUNREACH",
      "ENETUNREACH",
      "EADDRNOTAVAIL",
      "EAI_AGAIN",
      "FailedToOpenSocket",
      "UnableToConnect",
    ]) {
      expect([code, isConnectError(Object.assign(new Error("x"), { code }))]).toEqual([code, true]);
    }
    expect(isConnectError(Object.assign(new Error("x"), { code: "ECONNRESET" }))).toBe(false);
    expect(isConnectError(Object.assign(new Error("x"), { code: 111 }))).toBe(false);
    expect(isConnectError(new Error("ECONNREFUSED"))).toBe(false);
    expect(isConnectError(null)).toBe(false);
  });

  test("the first sentence, after the code unless it already starts with it", () => {
    const err = Object.assign(new Error("Unable to connect. Is the computer able to access the url?"), { code: "ConnectionRefused" });
    expect(errorText(err)).toBe("ConnectionRefused: Unable to connect");
    expect(errorText(Object.assign(new Error("ECONNRESET. the socket closed"), { code: "ECONNRESET" }))).toBe("ECONNRESET");
    expect(errorText(new Error("plain failure. more"))).toBe("plain failure");
    expect(errorText("a string")).toBe("a string");
    expect(errorText(null)).toBe("null");
  });
});
