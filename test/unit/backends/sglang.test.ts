import { afterEach, describe, expect, test } from "bun:test";
import { buildBody } from "../../../src/backends/body.ts";
import { createBodyTemplate, flushCache, sglangBackend } from "../../../src/backends/sglang.ts";
import { unreachable } from "../../../src/backends/http.ts";
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

describe("SGLang body template", () => {
  test("the script's payload and key order; the Backend's model is ignored", () => {
    const t = sglangBackend.createBodyTemplate({ maxNewTokens: 7, ignoreEos: true, extra: { rid: "r" }, model: "m" });
    expect(decoder.decode(buildBody(t, encoder.encode("1,2"), encoder.encode("3")))).toBe(
      '{"input_ids":[1,2,3],"sampling_params":{"temperature":0,"max_new_tokens":7,"ignore_eos":true},"stream":true,"rid":"r"}',
    );
  });

  test("the old call shape (no model) still works", () => {
    const t = createBodyTemplate({ maxNewTokens: 1, ignoreEos: false, extra: { input_ids: [9] } });
    expect(t.idsOverridden).toBe(true);
    expect(JSON.parse(decoder.decode(t.head)).input_ids).toEqual([9]);
  });
});

describe("flushCache (SGLang POST /flush_cache)", () => {
  const opts = { deadlineS: 5, serverTimeoutS: 3, sleep: async (): Promise<void> => {} };

  test("400 (busy) is retried until 200; ?timeout= is sent", async () => {
    const server = use(
      startSequenceServer([
        { status: 400, body: "Flush cache failed." },
        { status: 200, body: "Cache flushed." },
      ]),
    );
    expect(await sglangBackend.flush({ baseUrl: server.url, headers: {} }, opts)).toEqual({ attempts: 2 });
    expect(server.requests).toEqual(["POST /flush_cache?timeout=3", "POST /flush_cache?timeout=3"]);
  });

  test("another status fails at once", async () => {
    const server = use(startSequenceServer([{ status: 404, body: '{"detail":"Not Found"}' }]));
    const err = await flushCache({ baseUrl: server.url, headers: {} }, opts).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BenchError);
    expect((err as Error).message).toBe('POST /flush_cache answered 404: {"detail":"Not Found"}');
    expect(server.requests.length).toBe(1);
  });
});

describe("unreachable servers", () => {
  test("connection refused is said in words, with the code", async () => {
    const url = closedPortUrl().replace("/generate", "");
    const err = await flushCache({ baseUrl: url, headers: {} }, { deadlineS: 1, serverTimeoutS: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BenchError);
    expect((err as Error).message).toMatch(new RegExp(`^cannot reach the server at ${url}: connection refused \\((ECONNREFUSED|ConnectionRefused)\\)$`));
  });

  test("unknown errors keep their code or message", () => {
    expect(unreachable("http://h", Object.assign(new Error("x"), { code: "EWEIRD" })).message).toBe(
      "cannot reach the server at http://h: x (error code EWEIRD)",
    );
    // 0.3 printed a bare number ("...: 23"): an unnamed code comes with the error's message.
    expect(unreachable("http://h", Object.assign(new Error("socket could not be opened"), { code: 23 })).message).toBe(
      "cannot reach the server at http://h: socket could not be opened (error code 23)",
    );
    expect(unreachable("http://h", { code: "23" }).message).toBe("cannot reach the server at http://h: connection failed (error code 23)");
    expect(unreachable("http://h", new Error("bad url")).message).toBe("cannot reach the server at http://h: bad url");
  });
});
