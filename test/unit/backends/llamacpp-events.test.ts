/**
 * llama.cpp's native /completion stream, read from SSE captured from the real llama-server (test/fixtures/sse/llamacpp/
 * native-*.sse, build 0.5.0 de3ff81, `return_tokens: true`): the byte scanner agrees with JSON.parse on
 * every captured event, the final `stop: true` event ends the request without a [DONE] and gives timings.cache_n,
 * and a turn's ids are the streamed `tokens`, or flagged approximate when llama.cpp held a token back (its text
 * ended inside a UTF-8 character: the id is never streamed).
 */
import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { buildBody } from "../../../src/backends/body.ts";
import { backendFor } from "../../../src/backends/index.ts";
import { scanByParsing, scanLlamacppEvent } from "../../../src/backends/llamacpp-events.ts";
import { createEventFields, type EventFields, type EventKind } from "../../../src/backends/types.ts";
import { streamRequest } from "../../../src/client/stream.ts";
import { resolveTurnOutput } from "../../../src/engine/output-ids.ts";
import type { LoadedTokenizer } from "../../../src/workload/tokenizer.ts";
import { ROOT } from "../../helpers/run-cli.ts";
import { startScriptedServer, type TestServer } from "../../helpers/stream-servers.ts";

const native = backendFor("llamacpp", "completion");
const encoder = new TextEncoder();
const fixture = (name: string): string => readFileSync(join(ROOT, "test/fixtures/sse/llamacpp", `native-${name}.sse`), "utf8");
/** The data payloads of a captured stream. */
const payloadsOf = (sse: string): Uint8Array[] =>
  sse
    .split("\n\n")
    .filter((e) => e.startsWith("data: "))
    .map((e) => encoder.encode(e.slice("data: ".length)));

const servers: TestServer[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.stop();
});

/** What the scanner read of one event, without the text bounds. */
function read(scan: (p: Uint8Array, out: EventFields) => EventKind, payload: Uint8Array): Record<string, unknown> {
  const out = createEventFields();
  const kind = scan(payload, out);
  return { kind, completionTokens: out.completionTokens, cachedTokens: out.cachedTokens, finishType: out.finishType, slot: out.slot, message: out.message };
}

describe("scanLlamacppEvent on captured events", () => {
  test("every event of every capture reads as JSON.parse reads it; partial events are tokens, the last is final", () => {
    for (const name of ["cold", "warm", "held-back"]) {
      const payloads = payloadsOf(fixture(name));
      const kinds = payloads.map((p) => read(scanLlamacppEvent, p).kind);
      expect(kinds.at(-1)).toBe("final");
      expect(kinds.slice(0, -1).every((k) => k === "tokens")).toBe(true);
      for (const p of payloads) expect(read(scanLlamacppEvent, p)).toEqual(read(scanByParsing, p));
    }
  });

  test("the final event: tokens_predicted, timings.cache_n (not tokens_cached), stop_type limit as length", () => {
    const last = (name: string) => read(scanLlamacppEvent, payloadsOf(fixture(name)).at(-1)!);
    expect(last("cold")).toEqual({ kind: "final", completionTokens: 3, cachedTokens: 0, finishType: "length", slot: 0, message: "" });
    // Partial events say id_slot -1: no slot is read from them.
    expect(read(scanLlamacppEvent, payloadsOf(fixture("cold"))[0]!).slot).toBe(-1);
    // The warm request's slot held the 40-id prompt (tokens_cached 50 is what it holds afterwards).
    expect(last("warm")).toMatchObject({ completionTokens: 3, cachedTokens: 40 });
    // The same 4-id prompt had been sent before: 3 of it were cached (never the last one).
    expect(last("held-back")).toMatchObject({ completionTokens: 5, cachedTokens: 3 });
  });

  test("an error event and a foreign payload", () => {
    expect(read(scanLlamacppEvent, encoder.encode('{"error":{"code":500,"message":"boom","type":"server_error"}}'))).toMatchObject({
      kind: "error",
      message: "boom",
    });
    expect(read(scanLlamacppEvent, encoder.encode('{"text":"x","meta_info":{}}')).kind).toBe("invalid");
    expect(read(scanLlamacppEvent, encoder.encode('{"content":"x","stop":fal')).kind).toBe("invalid");
  });
});

/** streamRequest of a captured stream served as it came, split mid-event to exercise the SSE splitter. */
async function replay(name: string, maxNewTokens: number) {
  const sse = fixture(name);
  const cut = Math.floor(sse.length / 3);
  const server = startScriptedServer([
    { afterMs: 0, raw: sse.slice(0, cut) },
    { afterMs: 5, raw: sse.slice(cut) },
  ]);
  servers.push(server);
  return streamRequest({
    url: server.url,
    body: encoder.encode("{}"),
    backend: native,
    index: 0,
    promptLen: 40,
    maxNewTokens,
    textMode: "incremental",
    requestTimeoutMs: 10_000,
    stallTimeoutMs: 5_000,
    keepPayloads: true,
  });
}

// Every re-tokenized answer would read as [999]: an exact turn never calls it.
const tokenizer = { encode: () => Uint32Array.of(999) } as unknown as LoadedTokenizer;

describe("a captured stream through the client", () => {
  test("the final stop event ends the request (no [DONE]); the cached tokens and the ids are the server's", async () => {
    const rec = await replay("warm", 3);
    expect(rec).toMatchObject({ ok: true, failureKind: null, outputLen: 3, tokenEvents: 3, cachedTokens: 40, finishReason: "length", slot: 0 });
    expect(rec.itlMs.length).toBe(2);
    expect(resolveTurnOutput(rec, native, "incremental", tokenizer)).toEqual({ ids: Uint32Array.of(123936, 123936, 123936), approximate: false });
  });

  test("a held-back token: 5 generated, 1 id streamed, so the turn is approximate, never a short exact history", async () => {
    const rec = await replay("held-back", 5);
    expect(rec).toMatchObject({ ok: true, outputLen: 5, tokenEvents: 1, cachedTokens: 3 });
    // The held-back first token's text came with the second's event; the three after it never came at all.
    expect(rec.generatedText).toBe("é");
    expect(resolveTurnOutput(rec, native, "incremental", tokenizer)).toEqual({ ids: Uint32Array.of(999), approximate: true });
  });

  test("a stream cut before its final event is truncated", async () => {
    const sse = fixture("cold");
    const server = startScriptedServer([{ afterMs: 0, raw: sse.slice(0, sse.lastIndexOf("data: ")) }]);
    servers.push(server);
    const rec = await streamRequest({
      url: server.url,
      body: encoder.encode("{}"),
      backend: native,
      index: 0,
      promptLen: 40,
      maxNewTokens: 3,
      textMode: "incremental",
      requestTimeoutMs: 10_000,
      stallTimeoutMs: 5_000,
    });
    expect(rec).toMatchObject({ ok: false, failureKind: "truncated", outputLen: 3 });
  });
});

describe("the native body", () => {
  test("token ids, n_predict, return_tokens, llama.cpp's cache_prompt and id_slot; --extra-request-body last", () => {
    const template = native.createBodyTemplate({ maxNewTokens: 8, ignoreEos: true, extra: { n_predict: 9, seed: 1 }, model: "m", slot: 2 });
    const body = JSON.parse(new TextDecoder().decode(buildBody(template, encoder.encode("1,2"), encoder.encode("3"))));
    expect(body).toEqual({
      model: "m",
      prompt: [1, 2, 3],
      n_predict: 9,
      temperature: 0,
      stream: true,
      ignore_eos: true,
      return_tokens: true,
      cache_prompt: true,
      id_slot: 2,
      seed: 1,
    });
    expect(Object.keys(body)[2]).toBe("n_predict");
    expect(native.generatePath).toBe("/completion");
    expect(native.carriesOutputIds).toBe(true);
    // The sweep's llama.cpp backend is still the OpenAI one.
    expect(backendFor("llamacpp").generatePath).toBe("/v1/completions");
    expect(backendFor("llamacpp", "auto", { outputIds: true })).toBe(native);
    expect(backendFor("sglang", "auto", { outputIds: true }).generatePath).toBe("/generate");
  });
});
