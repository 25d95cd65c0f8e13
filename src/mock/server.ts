/**
 * An SGLang-compatible mock server (native /generate, /flush_cache, info endpoints) with a prefix
 * cache and a latency model, for tests and for measuring the benchmark's own overhead.
 *
 * It runs on node:http, not Bun.serve: Bun.serve withholds the end of the response header block until
 * a streamed body's first chunk (oven-sh/bun PR #33660), whereas SGLang sends the 200 and its headers
 * long before the first token, which clients must not mistake for TTFT.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { MockContext } from "./context.ts";
import { FaultPlan } from "./faults.ts";
import { handleFlush, handleResetPrefixCache } from "./flush.ts";
import { handleGenerate } from "./generate.ts";
import { sendEmpty, sendJson } from "./http.ts";
import { buildModelCard, buildModelInfo, buildModelList, buildServerInfo } from "./info.ts";
import { MockMetrics, renderMetrics } from "./metrics.ts";
import { handleCompletions } from "./openai.ts";
import type { MockOptions } from "./options.ts";
import { TieredCache } from "./tiered-cache.ts";
import { MockScheduler } from "./scheduler.ts";
import { TruthLog } from "./truth.ts";
import type { MockStats } from "./types.ts";

export type { MockStats, ReceivedRequest } from "./types.ts";

/** A started mock server. */
export interface MockServer {
  /** Base URL without a trailing slash, e.g. http://127.0.0.1:40123. */
  url: string;
  port: number;
  stats(): MockStats;
  /** Close every connection and stop every timer (also after the server died by --exit-after). */
  stop(): Promise<void>;
  /** Resolves once the server has shut down, by stop() or by dying (--exit-after). */
  closed: Promise<void>;
}

/** Start the mock on opts.host:opts.port (port 0 = an ephemeral port). */
export async function startMockServer(opts: MockOptions): Promise<MockServer> {
  const cache = new TieredCache(opts.pageSize, opts.cacheTokens, opts.hostCacheTokens);
  const scheduler = new MockScheduler(opts, cache);
  const startupTimeS = (performance.timeOrigin + performance.now()) / 1000;
  const sockets = new Set<Socket>();
  let shutdown: Promise<void> | null = null;
  const ctx: MockContext = {
    opts,
    scheduler,
    cache,
    counters: { generateRequests: 0, completionsRequests: 0, inFlight: 0, maxInFlight: 0, flushes: 0, flushRejected: 0, received: [] },
    faults: new FaultPlan(opts),
    metrics: new MockMetrics(),
    truth: opts.truthFile === null ? null : new TruthLog(opts.truthFile),
    liveRids: new Set(),
    // The prefix cache's capacity is what survives between requests, not the pool that holds running ones: a
    // cache smaller than one prompt must still serve it (and evict), as the cache-verification tests need.
    maxReqInputLen: opts.contextLength - 1,
    flushInProgress: false,
    die: () => {
      ctx.faults.note("exit");
      void close();
    },
  };
  const { counters } = ctx;
  let port = opts.port;

  const stats = (): MockStats => ({
    generateRequests: counters.generateRequests,
    completionsRequests: counters.completionsRequests,
    running: scheduler.running,
    queued: scheduler.queued,
    maxRunning: scheduler.maxObserved,
    maxInFlight: counters.maxInFlight,
    flushes: counters.flushes,
    flushRejected: counters.flushRejected,
    cacheTokens: cache.cachedTokens,
    evictedTokens: cache.evictedTokens,
    hostCacheTokens: cache.hostCachedTokens,
    openConnections: sockets.size,
    faultsInjected: { ...ctx.faults.injected },
    received: counters.received,
  });

  const route = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? "/", "http://mock");
    const method = req.method ?? "GET";
    const path = url.pathname;
    const allow = (...methods: string[]): boolean => {
      if (methods.includes(method)) return true;
      sendJson(res, 405, { detail: "Method Not Allowed" });
      return false;
    };
    if (path === "/generate" && !opts.noGenerate) {
      if (allow("POST", "PUT")) void handleGenerate(req, res, ctx);
    } else if (path === "/v1/completions") {
      if (allow("POST")) void handleCompletions(req, res, ctx);
    } else if (path === "/flush_cache") {
      if (allow("GET", "POST")) void handleFlush(res, url.searchParams.get("timeout"), ctx);
    } else if (path === "/reset_prefix_cache" && !opts.noDevMode) {
      if (allow("POST")) handleResetPrefixCache(res, ctx);
    } else if (path === "/metrics" && !opts.noMetrics) {
      if (!allow("GET")) return;
      const text = renderMetrics(ctx.metrics, { running: scheduler.running, queued: scheduler.queued }, opts.modelName);
      res.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8", "content-length": Buffer.byteLength(text) });
      res.end(text);
    } else if (path === "/health" || path === "/health_generate") {
      if (allow("GET")) sendEmpty(res, 200);
    } else if (path === "/model_info" || path === "/get_model_info") {
      if (allow("GET")) sendJson(res, 200, buildModelInfo(opts));
    } else if (path === "/server_info" || path === "/get_server_info") {
      const state = { port, maxReqInputLen: ctx.maxReqInputLen, startupTimeS, running: scheduler.running, queued: scheduler.queued, cacheTokens: cache.cachedTokens };
      if (allow("GET")) sendJson(res, 200, buildServerInfo(opts, state));
    } else if (path === "/v1/models") {
      if (allow("GET")) sendJson(res, 200, buildModelList(opts, Math.floor(startupTimeS)));
    } else if (path.startsWith("/v1/models/")) {
      if (allow("GET")) sendModel(res, decodeURIComponent(path.slice("/v1/models/".length)), opts, Math.floor(startupTimeS));
    } else if (path === "/mock/stats") {
      if (allow("GET")) sendJson(res, 200, stats());
    } else if (path === "/mock/received") {
      if (!allow("GET")) return;
      if (opts.recordInputs) sendJson(res, 200, counters.received);
      else sendJson(res, 404, { detail: "Not Found (start the mock with recordInputs to keep received requests)" });
    } else {
      sendJson(res, 404, { detail: "Not Found" });
    }
  };

  const server = createServer(route);
  // Long queued requests send nothing for a while; never time them out. Idle keep-alive sockets close
  // after 5 s, as uvicorn's do, so clients meet the same reuse race they meet against SGLang.
  server.requestTimeout = 0;
  server.keepAliveTimeout = 5000;
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  const host = opts.host.includes(":") ? `[${opts.host}]` : opts.host;

  let resolveClosed: () => void = () => {};
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  /** Stop everything once: timers, listener, every socket (abruptly, as a dying process), then the truth log. */
  const close = (): Promise<void> => {
    shutdown ??= (async () => {
      scheduler.stopAll();
      const listenerClosed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections();
      await listenerClosed;
      // Let the responses' 'close' handlers record how their requests ended before the last flush.
      await new Promise((resolve) => setImmediate(resolve));
      ctx.truth?.flush();
      resolveClosed();
    })();
    return shutdown;
  };

  return { url: `http://${host}:${port}`, port, stats, stop: close, closed };
}

function sendModel(res: ServerResponse, name: string, opts: MockOptions, createdS: number): void {
  if (name === opts.modelName) {
    sendJson(res, 200, buildModelCard(opts, createdS));
    return;
  }
  sendJson(res, 404, {
    error: { message: `The model '${name}' does not exist`, type: "invalid_request_error", param: "model", code: "model_not_found" },
  });
}
