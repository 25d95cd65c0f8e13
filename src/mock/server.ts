/**
 * A mock serving engine with a prefix cache and a latency model, for tests and for measuring the benchmark's own
 * overhead. By --personality it answers as SGLang (native /generate, /flush_cache, info endpoints, and vLLM's
 * OpenAI API beside them: warmbench 0.1's mock), vLLM alone, llama.cpp's llama-server (per-slot caches), or a bare
 * OpenAI-compatible server; every personality serves /v1/completions and /v1/chat/completions.
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
import { type BacklogResult, raiseListenBacklog } from "./listen-backlog.ts";
import { sendEmpty, sendJson } from "./http.ts";
import { buildModelCard, buildModelInfo, buildModelList, buildServerInfo } from "./info.ts";
import { MockMetrics, renderMetrics } from "./metrics.ts";
import { handleOpenai } from "./openai.ts";
import type { MockOptions } from "./options.ts";
import { TieredCache } from "./tiered-cache.ts";
import { RadixPolicy } from "./cache-policy.ts";
import { loadMockTokenizer } from "./chat-template.ts";
import { buildLlamaModels, buildProps, handleSlotAction, handleSlots, renderLlamaMetrics } from "./llamacpp.ts";
import { SlotCache } from "./slot-cache.ts";
import { MockScheduler } from "./scheduler.ts";
import { TruthLog, truthSettings } from "./truth.ts";
import type { MockStats } from "./types.ts";

/** The listen backlog the mock asks for: the bench's 4096 streams connect at once. */
const MOCK_LISTEN_BACKLOG = 4096;
let backlogWarned = false;

/** One stderr line per process when the backlog stays below MOCK_LISTEN_BACKLOG (somaxconn lower, not Linux...). */
function warnBacklogOnce(raised: BacklogResult): void {
  if (backlogWarned) return;
  backlogWarned = true;
  const why = raised.backlog === null ? `stays Bun's 512: ${raised.reason}` : `is ${raised.backlog} (net.core.somaxconn)`;
  process.stderr.write(`warmbench mock: listen backlog ${why}, not ${MOCK_LISTEN_BACKLOG}; more connections at once wait for SYN retries\n`);
}

/** The version a vLLM-personality mock reports at /version; "-mock" so nobody mistakes it for a real server. */
const MOCK_VLLM_VERSION = "0.11.0-mock";

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
  const slots = opts.personality === "llamacpp" ? new SlotCache(opts.slots, opts.cacheRam, opts.vocabSize) : null;
  const behaviour = { cacheOutputs: !opts.noOutputCache, insertAt: opts.insertAt, inflightPages: opts.inflightPages };
  const scheduler = new MockScheduler(opts, slots ?? new RadixPolicy(cache, opts.maxRunning, opts.vocabSize, behaviour));
  const startupTimeS = (performance.timeOrigin + performance.now()) / 1000;
  const sockets = new Set<Socket>();
  let shutdown: Promise<void> | null = null;
  const ctx: MockContext = {
    opts,
    scheduler,
    cache,
    slots,
    tokenizer: loadMockTokenizer(opts.tokenizer),
    counters: { generateRequests: 0, completionsRequests: 0, inFlight: 0, maxInFlight: 0, flushes: 0, flushRejected: 0, received: [] },
    faults: new FaultPlan(opts),
    metrics: new MockMetrics(opts, () => (opts.cacheTokens > 0 ? cache.device.cachedTokens / opts.cacheTokens : 0)),
    truth: opts.truthFile === null ? null : new TruthLog(opts.truthFile, truthSettings(opts)),
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
    cacheTokens: slots?.cachedTokens ?? cache.cachedTokens,
    evictedTokens: cache.evictedTokens,
    hostCacheTokens: cache.hostCachedTokens,
    openConnections: sockets.size,
    faultsInjected: { ...ctx.faults.injected },
    received: counters.received,
  });

  const route = (req: IncomingMessage, res: ServerResponse): void => {
    // As an upstream behind a router that names it (nginx's $upstream_addr): every answer says which server it is.
    if (opts.servedByHeader !== null) res.setHeader(opts.servedByHeader, String(req.headers["x-forwarded-host"] ?? req.headers.host ?? ""));
    const url = new URL(req.url ?? "/", "http://mock");
    const method = req.method ?? "GET";
    const path = url.pathname;
    const allow = (...methods: string[]): boolean => {
      if (methods.includes(method)) return true;
      sendJson(res, 405, { detail: "Method Not Allowed" });
      return false;
    };
    if (path === "/mock/stats") {
      if (allow("GET")) sendJson(res, 200, stats());
    } else if (path === "/mock/received") {
      if (!allow("GET")) return;
      if (opts.recordInputs) sendJson(res, 200, counters.received);
      else sendJson(res, 404, { detail: "Not Found (start the mock with recordInputs to keep received requests)" });
    } else if (path === "/v1/completions" || path === "/v1/chat/completions") {
      if (allow("POST")) void handleOpenai(req, res, ctx, path === "/v1/completions" ? "completions" : "chat");
    } else if (opts.personality === "llamacpp") {
      routeLlamacpp(req, res, url, allow);
    } else {
      routeSglangOrVllm(req, res, url, allow);
    }
  };

  /** llama-server: its own endpoints only (no /generate, /server_info, /version, /flush_cache). */
  const routeLlamacpp = (req: IncomingMessage, res: ServerResponse, url: URL, allow: (...m: string[]) => boolean): void => {
    const path = url.pathname;
    const slotAction = /^\/slots\/([^/]+)$/.exec(path);
    if (path === "/completion" || path === "/completions") {
      if (allow("POST")) void handleOpenai(req, res, ctx, "completion");
    } else if (path === "/props") {
      if (allow("GET")) sendJson(res, 200, buildProps(opts));
    } else if (path === "/slots") {
      if (allow("GET")) handleSlots(res, ctx);
    } else if (slotAction) {
      if (allow("POST")) void handleSlotAction(res, ctx, slotAction[1]!, url.searchParams.get("action"));
    } else if (path === "/health" || path === "/v1/health") {
      if (allow("GET")) sendJson(res, 200, { status: "ok" });
    } else if (path === "/v1/models" || path === "/models") {
      if (allow("GET")) sendJson(res, 200, buildLlamaModels(opts, Math.floor(startupTimeS)));
    } else if (path === "/metrics" && !opts.noMetrics) {
      if (!allow("GET")) return;
      const text = renderLlamaMetrics(ctx.metrics, scheduler.running, scheduler.queued);
      res.writeHead(200, { "content-type": "text/plain; version=0.0.4", "content-length": Buffer.byteLength(text) });
      res.end(text);
    } else {
      sendJson(res, 404, { error: { code: 404, message: "File Not Found", type: "not_found_error" } });
    }
  };

  /** SGLang (native endpoints, vLLM's beside them), vLLM alone, or a bare OpenAI-compatible server. */
  const routeSglangOrVllm = (req: IncomingMessage, res: ServerResponse, url: URL, allow: (...m: string[]) => boolean): void => {
    const path = url.pathname;
    const sglang = opts.personality === "sglang";
    const vllm = opts.personality === "vllm";
    if (path === "/generate" && sglang && !opts.noGenerate) {
      if (allow("POST", "PUT")) void handleGenerate(req, res, ctx);
    } else if (path === "/flush_cache" && sglang) {
      if (allow("GET", "POST")) void handleFlush(res, url.searchParams.get("timeout"), ctx);
    } else if (path === "/reset_prefix_cache" && (sglang || vllm) && !opts.noDevMode) {
      if (allow("POST")) handleResetPrefixCache(res, ctx);
    } else if (path === "/version" && vllm) {
      if (allow("GET")) sendJson(res, 200, { version: MOCK_VLLM_VERSION });
    } else if (path === "/metrics" && (sglang || vllm) && !opts.noMetrics) {
      if (!allow("GET")) return;
      const text = renderMetrics(ctx.metrics, { running: scheduler.running, queued: scheduler.queued }, opts.modelName);
      res.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8", "content-length": Buffer.byteLength(text) });
      res.end(text);
    } else if (path === "/health" || path === "/health_generate") {
      if (allow("GET")) sendEmpty(res, 200);
    } else if ((path === "/model_info" || path === "/get_model_info") && sglang) {
      if (allow("GET")) sendJson(res, 200, buildModelInfo(opts));
    } else if ((path === "/server_info" || path === "/get_server_info") && sglang) {
      const state = {
        port,
        maxReqInputLen: ctx.maxReqInputLen,
        startupTimeS,
        running: scheduler.running,
        queued: scheduler.queued,
        cacheTokens: cache.cachedTokens,
      };
      if (allow("GET")) sendJson(res, 200, buildServerInfo(opts, state));
    } else if (path === "/v1/models") {
      if (allow("GET")) sendJson(res, 200, buildModelList(opts, Math.floor(startupTimeS)));
    } else if (path.startsWith("/v1/models/")) {
      if (allow("GET")) sendModel(res, decodeURIComponent(path.slice("/v1/models/".length)), opts, Math.floor(startupTimeS));
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
  // Bun listens with a backlog of 512 whatever listen() is given; 4096 streams connecting at once need 4096
  // (issue 37): raised on the listening socket itself (listen-backlog.ts), capped by net.core.somaxconn.
  const raised = raiseListenBacklog(port, MOCK_LISTEN_BACKLOG);
  if (raised.backlog === null || raised.cappedBy !== null) warnBacklogOnce(raised);
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
