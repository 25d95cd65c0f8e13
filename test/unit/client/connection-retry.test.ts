/**
 * No request lost to a stale connection: a server on 127.0.0.1 (raw TCP, so the test decides what each connection
 * does) answers a connection's first request, keeps the connection open as keep-alive says, and resets it when the
 * next request arrives on it, as a server that closed an idle or finished connection does. The client sends that
 * request once more on a fresh connection, and counts it (`retriedConnection`, summed into `retried_connections`).
 */
import { afterEach, describe, expect, test } from "bun:test";
import { createServer, type Server, type Socket } from "node:net";
import { streamRequest } from "../../../src/client/stream.ts";
import type { StreamRequest } from "../../../src/client/stream-request.ts";
import { requestMetrics } from "../../../src/metrics/summarize.ts";
import { sglangBackend } from "../../../src/backends/sglang.ts";
import { DONE_LINE, sglangEventLine } from "../../helpers/stream-servers.ts";

const BODY = new TextEncoder().encode(JSON.stringify({ input_ids: [1, 2, 3], stream: true }));

/** What the server does with the n-th request (0-based) of a connection, and with the connection's number. */
type Policy = (requestOnConnection: number, connection: number) => "answer" | "reset" | "reset-late";

/** How long a "reset-late" request is held before the reset: past the stale window (STALE_WITHIN_MS, 1 s). */
const LATE_MS = 1200;

interface RawServer {
  url: string;
  /** Connections accepted, and requests read, so far. */
  connections: number;
  requests: number;
  close(): Promise<void>;
}

const SSE_BODY =
  sglangEventLine({ text: "a", completionTokens: 1, cachedTokens: 0, finish: null }) +
  sglangEventLine({ text: "ab", completionTokens: 2, cachedTokens: 0, finish: { type: "length", length: 2 } }) +
  DONE_LINE;

/** One chunked SSE response that leaves the connection open (keep-alive). */
function answer(socket: Socket, serverHeader: string | null): void {
  const body = Buffer.from(SSE_BODY);
  const head = [
    "HTTP/1.1 200 OK",
    "Content-Type: text/event-stream",
    "Transfer-Encoding: chunked",
    "Keep-Alive: timeout=5, max=100",
    ...(serverHeader === null ? [] : [`Server: ${serverHeader}`]),
    "",
    "",
  ].join("\r\n");
  socket.write(`${head}${body.length.toString(16)}\r\n`);
  socket.write(body);
  socket.write("\r\n0\r\n\r\n");
}

async function startRawServer(policy: Policy, serverHeader: string | null = null): Promise<RawServer> {
  const sockets = new Set<Socket>();
  const state = { connections: 0, requests: 0 };
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    const connection = state.connections++;
    let onConnection = 0;
    let pending = Buffer.alloc(0);
    socket.on("data", (data: Buffer) => {
      pending = Buffer.concat([pending, data]);
      for (;;) {
        const headEnd = pending.indexOf("\r\n\r\n");
        if (headEnd === -1) return;
        const length = Number(/content-length: *(\d+)/i.exec(pending.subarray(0, headEnd).toString())?.[1] ?? 0);
        if (pending.length < headEnd + 4 + length) return;
        pending = pending.subarray(headEnd + 4 + length);
        state.requests++;
        const what = policy(onConnection++, connection);
        if (what === "reset") {
          socket.resetAndDestroy();
          return;
        }
        if (what === "reset-late") {
          setTimeout(() => socket.resetAndDestroy(), LATE_MS);
          return;
        }
        answer(socket, serverHeader);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/generate`,
    get connections() {
      return state.connections;
    },
    get requests() {
      return state.requests;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const servers: RawServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});
async function use(policy: Policy, serverHeader: string | null = null): Promise<RawServer> {
  const s = await startRawServer(policy, serverHeader);
  servers.push(s);
  return s;
}

function request(url: string, overrides: Partial<StreamRequest> = {}): StreamRequest {
  return { url, body: BODY, index: 0, promptLen: 3, maxNewTokens: 2, textMode: "cumulative", requestTimeoutMs: 10_000, stallTimeoutMs: 5_000, ...overrides };
}

describe("a pooled connection the server closed", () => {
  test("the request that lands on it is sent once more on a fresh connection, and counted", async () => {
    // Every connection answers its first request and resets under the second.
    const server = await use((n) => (n === 0 ? "answer" : "reset"));
    const first = await streamRequest(request(server.url));
    expect(first).toMatchObject({ ok: true, outputLen: 2 });
    expect(first.retriedConnection).toBeUndefined();
    const second = await streamRequest(request(server.url));
    expect(second).toMatchObject({ ok: true, outputLen: 2, retriedConnection: true });
    // Three requests reached the server: the first, the one reset on the reused connection, its retry on a new one.
    expect(server.requests).toBe(3);
    expect(server.connections).toBe(2);
    const line = requestMetrics([first, second], 1, (t) => t.length);
    expect(line.retried_connections).toBe(1);
    expect(line.failed).toBe(0);
  });

  test("the retry happens once: a server that resets every request fails it, retried and never hidden", async () => {
    const server = await use((n, connection) => (connection === 0 && n === 0 ? "answer" : "reset"));
    expect((await streamRequest(request(server.url))).ok).toBe(true);
    const rec = await streamRequest(request(server.url));
    expect(rec.ok).toBe(false);
    expect(rec.failureKind).toBe("network");
    expect(rec.retriedConnection).toBe(true);
    // The reused connection's try and one retry: no third.
    expect(server.requests).toBe(3);
    const line = requestMetrics([rec], 1, (t) => t.length);
    expect(line).toMatchObject({ failed: 1, retried_connections: 1, errors_by_kind: { network: 1 } });
  });

  test("a request already on a fresh connection is not retried", async () => {
    const server = await use(() => "reset");
    const rec = await streamRequest(request(server.url));
    // The first request to an origin has no pooled connection, yet the client cannot tell: it retries once.
    expect(rec.ok).toBe(false);
    const backend = { ...sglangBackend, freshConnections: true };
    const before = server.requests;
    const fresh = await streamRequest(request(server.url, { backend }));
    expect(fresh).toMatchObject({ ok: false, failureKind: "network" });
    expect(fresh.retriedConnection).toBeUndefined();
    expect(server.requests - before).toBe(1);
  });

  test("a reset that comes long after the send is a server dropping the request it took: not sent again", async () => {
    const server = await use((n) => (n === 0 ? "answer" : "reset-late"));
    expect((await streamRequest(request(server.url))).ok).toBe(true);
    const rec = await streamRequest(request(server.url));
    expect(rec).toMatchObject({ ok: false, failureKind: "network" });
    expect(rec.retriedConnection).toBeUndefined();
    expect(server.requests).toBe(2);
  });

  test("a server that names itself llama.cpp gets fresh connections after its first answer: nothing to retry", async () => {
    const server = await use((n) => (n === 0 ? "answer" : "reset"), "llama.cpp");
    for (let i = 0; i < 5; i++) {
      const rec = await streamRequest(request(server.url));
      expect(rec).toMatchObject({ ok: true, outputLen: 2 });
      expect(rec.retriedConnection).toBeUndefined();
    }
    expect(server.requests).toBe(5);
    expect(server.connections).toBe(5);
  });
});
