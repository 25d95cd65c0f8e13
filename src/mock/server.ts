/**
 * An SGLang-compatible mock server (native /generate, /flush_cache, info endpoints) with a prefix
 * cache and a latency model, for tests and for measuring the benchmark's own overhead.
 *
 * It runs on node:http, not Bun.serve: Bun.serve withholds the end of the response header block until
 * a streamed body's first chunk (oven-sh/bun PR #33660), whereas SGLang sends the 200 and its headers
 * long before the first token, which clients must not mistake for TTFT.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { MockOptions } from "./options.ts";
import { handleFlush, type FlushContext } from "./flush.ts";
import { handleGenerate, type GenerateContext } from "./generate.ts";
import { sendEmpty, sendJson } from "./http.ts";
import { buildModelCard, buildModelInfo, buildModelList, buildServerInfo } from "./info.ts";
import { PrefixCache } from "./prefix-cache.ts";
import { MockScheduler } from "./scheduler.ts";
import type { MockCounters, MockStats } from "./types.ts";

export type { MockStats, ReceivedRequest } from "./types.ts";

/** A started mock server. */
export interface MockServer {
  /** Base URL without a trailing slash, e.g. http://127.0.0.1:40123. */
  url: string;
  port: number;
  stats(): MockStats;
  /** Close every connection and stop every timer. */
  stop(): Promise<void>;
}

/** Start the mock on opts.host:opts.port (port 0 = an ephemeral port). */
export async function startMockServer(opts: MockOptions): Promise<MockServer> {
  const cache = new PrefixCache(opts.pageSize, opts.cacheTokens);
  const scheduler = new MockScheduler(opts, cache);
  const counters: MockCounters = { generateRequests: 0, inFlight: 0, maxInFlight: 0, flushes: 0, flushRejected: 0, received: [] };
  const startupTimeS = (performance.timeOrigin + performance.now()) / 1000;
  const generateCtx: GenerateContext = {
    opts,
    scheduler,
    counters,
    liveRids: new Set(),
    maxReqInputLen: Math.min(opts.contextLength, opts.cacheTokens) - 1,
  };
  const flushCtx: FlushContext = { scheduler, cache, counters, flushInProgress: false };
  let port = opts.port;

  const stats = (): MockStats => ({
    generateRequests: counters.generateRequests,
    running: scheduler.running,
    queued: scheduler.queued,
    maxRunning: scheduler.maxObserved,
    maxInFlight: counters.maxInFlight,
    flushes: counters.flushes,
    flushRejected: counters.flushRejected,
    cacheTokens: cache.cachedTokens,
    evictedTokens: cache.evictedTokens,
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
    if (path === "/generate") {
      if (allow("POST", "PUT")) void handleGenerate(req, res, generateCtx);
    } else if (path === "/flush_cache") {
      if (allow("GET", "POST")) void handleFlush(res, url.searchParams.get("timeout"), flushCtx);
    } else if (path === "/health" || path === "/health_generate") {
      if (allow("GET")) sendEmpty(res, 200);
    } else if (path === "/model_info" || path === "/get_model_info") {
      if (allow("GET")) sendJson(res, 200, buildModelInfo(opts));
    } else if (path === "/server_info" || path === "/get_server_info") {
      const state = { port, maxReqInputLen: generateCtx.maxReqInputLen, startupTimeS, running: scheduler.running, queued: scheduler.queued, cacheTokens: cache.cachedTokens };
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
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  const host = opts.host.includes(":") ? `[${opts.host}]` : opts.host;

  return {
    url: `http://${host}:${port}`,
    port,
    stats,
    stop: async () => {
      scheduler.stopAll();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
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
