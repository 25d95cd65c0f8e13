/**
 * A server cannot grow the client's memory without bound: one SSE line that never ends, or a control answer of
 * gigabytes, is read up to its documented limit (MAX_SSE_LINE_BYTES, MAX_CONTROL_BODY_BYTES) and no further; the
 * request fails as `protocol`, the control call with one error line naming the endpoint and the limit. A proxy that
 * echoes the Authorization header back gets no credential into a failure message.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { createSseSplitter, MAX_SSE_LINE_BYTES } from "../../../src/client/sse.ts";
import { streamRequest } from "../../../src/client/stream.ts";
import type { StreamRequest } from "../../../src/client/stream-request.ts";
import { scrapeCacheCounters } from "../../../src/client/prometheus.ts";
import { fetchServerInfo } from "../../../src/backends/server-info.ts";
import { controlFetch, controlText, MAX_CONTROL_BODY_BYTES, redactCredentials, type Control } from "../../../src/backends/http.ts";
import { BenchError } from "../../../src/errors.ts";
import { DONE_LINE, sglangEventLine } from "../../helpers/stream-servers.ts";

const MIB = 1024 * 1024;
const TOKEN = "s3cr3t-T0ken-XYZ";
const enc = new TextEncoder();

/** Bytes each endless body handed out, by path: proves the client stopped reading near the limit. */
const served = new Map<string, number>();

/** A body that never ends: `head`, then 1 MiB pieces of `fill` for as long as the client reads. */
function endless(path: string, head: string, fill: number): ReadableStream<Uint8Array> {
  const piece = new Uint8Array(MIB).fill(fill);
  served.set(path, 0);
  let first = true;
  // One piece per pull: the stream asks for more only as the client reads, and stops once it cancels.
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const bytes = first ? enc.encode(head) : piece;
        first = false;
        served.set(path, (served.get(path) ?? 0) + bytes.length);
        controller.enqueue(bytes);
      },
    },
    { highWaterMark: 0 },
  );
}

let server: Server<undefined>;
let base: string;

beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      const sse = { "content-type": "text/event-stream" };
      if (path === "/endless-line") return new Response(endless(path, 'data: {"text":"', 120), { headers: sse });
      if (path === "/endless-after-done")
        return new Response(
          endless(
            path,
            `${sglangEventLine({ text: "a", completionTokens: 1, cachedTokens: 0, finish: { type: "length", length: 1 } })}${DONE_LINE}data: `,
            120,
          ),
          { headers: sse },
        );
      if (path === "/long-line") {
        const line = `data: {"text":"${"x".repeat(MAX_SSE_LINE_BYTES)}"}\n\n`;
        return new Response(line, { headers: sse });
      }
      if (path === "/echo-auth") {
        const auth = req.headers.get("authorization") ?? "";
        return new Response(`<html>401 Unauthorized: you sent Authorization: ${auth}</html>`, { status: 401 });
      }
      if (path === "/huge-error") return new Response(endless(path, `error ${req.headers.get("authorization")} `, 121), { status: 500 });
      if (path === "/server_info") return new Response(endless(path, '{"version":"', 120), { headers: { "content-type": "application/json" } });
      if (path === "/metrics") return new Response(endless(path, "sglang:cached_tokens_total ", 49));
      if (path === "/declared") return new Response("x".repeat(MAX_CONTROL_BODY_BYTES + 1));
      return new Response("not found", { status: 404 });
    },
  });
  base = `http://127.0.0.1:${server.port}`;
});

afterAll(() => {
  server.stop(true);
});

const ctl = (): Control => ({ baseUrl: base, headers: { authorization: `Bearer ${TOKEN}` } });

function request(path: string): StreamRequest {
  return {
    url: base + path,
    body: enc.encode(JSON.stringify({ input_ids: [1, 2, 3], stream: true })),
    headers: { authorization: `Bearer ${TOKEN}` },
    index: 0,
    promptLen: 3,
    maxNewTokens: 4,
    textMode: "cumulative",
    requestTimeoutMs: 60_000,
    stallTimeoutMs: 30_000,
  };
}

describe("the SSE line limit", () => {
  test("the splitter gives up on a line past its limit, across chunks and within one", () => {
    const seen: string[] = [];
    const dec = new TextDecoder();
    const split = createSseSplitter((p) => seen.push(dec.decode(p)), 8);
    expect(split.push(enc.encode("data: 12\n"))).toBe(true);
    expect(split.push(enc.encode("data:"))).toBe(true);
    expect(split.push(enc.encode(" 1234"))).toBe(false);
    // Dead from then on: nothing more is dispatched, not even at the end.
    expect(split.push(enc.encode("\ndata: 1\n"))).toBe(false);
    split.finish();
    expect(seen).toEqual(["12"]);
    const one = createSseSplitter(() => {}, 8);
    expect(one.push(enc.encode("data: 123\n"))).toBe(false);
  });

  test("a line of exactly the limit is read", () => {
    let got = 0;
    const split = createSseSplitter((p) => (got = p.length), 12);
    expect(split.push(enc.encode("data: 123456\n"))).toBe(true);
    expect(got).toBe(6);
  });

  test("one line that never ends fails the request as protocol at the limit, and reading stops", async () => {
    const rec = await streamRequest(request("/endless-line"));
    expect(rec.ok).toBe(false);
    expect(rec.failureKind).toBe("protocol");
    expect(rec.failureMessage).toContain("an SSE line longer than 16 MiB");
    // The server was not read much past the limit (its socket buffers aside).
    expect(served.get("/endless-line")!).toBeLessThan(MAX_SSE_LINE_BYTES + 64 * MIB);
  }, 60_000);

  test("a line just past the limit that does end fails the same way", async () => {
    const rec = await streamRequest(request("/long-line"));
    expect(rec.failureKind).toBe("protocol");
  }, 60_000);

  test("after [DONE] an endless line is dropped without failing the finished request", async () => {
    const rec = await streamRequest(request("/endless-after-done"));
    expect(rec.failureMessage).toBe("");
    expect(rec.ok).toBe(true);
    expect(rec.outputLen).toBe(1);
  }, 60_000);
});

describe("the control answers' limit", () => {
  test("an endless /server_info is one BenchError naming the endpoint and the limit", async () => {
    const err = await fetchServerInfo(ctl()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BenchError);
    expect((err as Error).message).toContain("/server_info answered more than 64 MiB");
    expect((err as Error).message.split("\n")).toHaveLength(1);
    expect(served.get("/server_info")!).toBeLessThan(MAX_CONTROL_BODY_BYTES + 64 * MIB);
  }, 60_000);

  test("a Content-Length past the limit is refused before reading", async () => {
    const res = await controlFetch(ctl(), "/declared", { timeoutMs: 30_000 });
    await expect(controlText(ctl(), res, "/declared")).rejects.toThrow("/declared answered more than 64 MiB");
  }, 60_000);

  test("an endless /metrics leaves the counters unknown, not the run broken", async () => {
    expect(await scrapeCacheCounters(ctl())).toBeNull();
    expect(served.get("/metrics")!).toBeLessThan(MAX_CONTROL_BODY_BYTES + 64 * MIB);
  }, 60_000);
});

describe("the limits raised or lowered per run (StreamRequest.maxSseLineBytes, Control.maxBodyBytes)", () => {
  test("a line limit of 1 MiB fails the endless line at 1 MiB, naming it", async () => {
    const rec = await streamRequest({ ...request("/endless-line"), maxSseLineBytes: MIB });
    expect([rec.failureKind, rec.failureMessage]).toEqual(["protocol", "an SSE line longer than 1 MiB, the most warmbench reads of one line"]);
    expect(served.get("/endless-line")!).toBeLessThan(MAX_SSE_LINE_BYTES);
  }, 60_000);

  test("a line limit past 16 MiB reads a line longer than the default", async () => {
    const rec = await streamRequest({ ...request("/long-line"), maxSseLineBytes: MAX_SSE_LINE_BYTES + 64 });
    // The line is read whole (it is no event warmbench knows, so the stream then ends without [DONE]).
    expect(rec.failureMessage).not.toContain("an SSE line longer than");
  }, 60_000);

  test("a control limit of 1 MiB refuses /server_info at 1 MiB; one of 128 MiB takes a declared 64 MiB + 1 answer", async () => {
    const err = await fetchServerInfo({ ...ctl(), maxBodyBytes: MIB }).catch((e: unknown) => e);
    expect((err as Error).message).toContain("/server_info answered more than 1 MiB");
    expect(served.get("/server_info")!).toBeLessThan(MAX_CONTROL_BODY_BYTES);
    const big = { ...ctl(), maxBodyBytes: 128 * MIB };
    const res = await controlFetch(big, "/declared", { timeoutMs: 30_000 });
    expect((await controlText(big, res, "/declared")).length).toBe(MAX_CONTROL_BODY_BYTES + 1);
  }, 60_000);
});

describe("credentials echoed back", () => {
  test("a 401 page that echoes the Authorization header keeps no token in the failure", async () => {
    const rec = await streamRequest(request("/echo-auth"));
    expect(rec.failureKind).toBe("http");
    expect(rec.failureMessage).toContain("Bearer (redacted)");
    expect(rec.failureMessage).not.toContain(TOKEN);
  });

  test("an endless error page is read only in part, its token redacted", async () => {
    const rec = await streamRequest(request("/huge-error"));
    expect(rec.failureKind).toBe("http");
    expect(rec.failureMessage).not.toContain(TOKEN);
    expect(rec.failureMessage.length).toBeLessThan(300);
  }, 60_000);

  test("a control answer echoing the key has it redacted", async () => {
    const res = await controlFetch(ctl(), "/echo-auth", { timeoutMs: 10_000 });
    const text = await controlText(ctl(), res, "/echo-auth");
    expect(text).not.toContain(TOKEN);
    expect(text).toContain("Bearer (redacted)");
  });

  test("redactCredentials: any bearer token, and the sent key wherever it appears", () => {
    expect(redactCredentials("auth: bearer abc.DEF-123_x== ok")).toBe("auth: bearer (redacted) ok");
    expect(redactCredentials(`{"api_key":"${TOKEN}"}`, { Authorization: `Bearer ${TOKEN}` })).toBe('{"api_key":"(redacted)"}');
    expect(redactCredentials(`key ${TOKEN}`, { "x-api-key": TOKEN })).toBe("key (redacted)");
    // Headers that carry no credential are left alone, and so is text without one.
    expect(redactCredentials("x-request-id abcdefgh", { "x-request-id": "abcdefgh" })).toBe("x-request-id abcdefgh");
  });
});
