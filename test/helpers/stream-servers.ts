/**
 * Tiny local servers for streamRequest tests, one per behaviour (autocannon's startTimeoutServer /
 * startSocketDestroyingServer family). All listen on 127.0.0.1, port 0, and never time idle sockets out.
 */

const encoder = new TextEncoder();

/** A running test server. */
export interface TestServer {
  url: string;
  /** Bodies received, in arrival order. */
  bodies: string[];
  /** Content-type headers received, in arrival order. */
  contentTypes: (string | null)[];
  /** All headers of each request, lower-case names, in arrival order (empty for the raw socket server). */
  headers: Record<string, string>[];
  /** "METHOD /path?query" of each request, in arrival order (empty for the raw socket server). */
  requests: string[];
  stop(): void;
}

/** One scripted write: wait `afterMs` after the previous write, then send `raw`. */
export interface ScriptStep {
  afterMs: number;
  raw: string;
}

/** How the body ends after the script: cleanly, never, or by resetting the socket. */
export type ScriptEnd = "close" | "hang" | "destroy";

/** Fields of one SGLang /generate stream event. */
export interface SglangEventSpec {
  text: string;
  completionTokens: number;
  cachedTokens?: number;
  finish?: Record<string, unknown> | null;
}

/** `data: <SGLang event JSON>\n\n`, shaped as protocol.md §1.3. */
export function sglangEventLine(spec: SglangEventSpec): string {
  const meta: Record<string, unknown> = {
    id: "t",
    finish_reason: spec.finish ?? null,
    prompt_tokens: 5,
    completion_tokens: spec.completionTokens,
  };
  if (spec.cachedTokens !== undefined) meta.cached_tokens = spec.cachedTokens;
  return `data: ${JSON.stringify({ text: spec.text, output_ids: [], meta_info: meta })}\n\n`;
}

/** Fields of one OpenAI `/v1/completions` stream chunk (protocol.md §3). */
export interface OpenaiChunkSpec {
  text: string;
  finish?: string | null;
  /** Cumulative usage.completion_tokens (continuous_usage_stats); no usage key when absent. */
  completionTokens?: number;
  cachedTokens?: number;
}

/** `data: <chunk JSON>\n\n`, shaped as vLLM sends it (exclude_unset; usage only with continuous stats). */
export function openaiChunkLine(spec: OpenaiChunkSpec): string {
  const chunk: Record<string, unknown> = {
    id: "cmpl-t",
    object: "text_completion",
    created: 1,
    model: "m",
    choices: [{ index: 0, text: spec.text, logprobs: null, finish_reason: spec.finish ?? null, stop_reason: null }],
  };
  if (spec.completionTokens !== undefined) chunk.usage = usageOf(spec.completionTokens, spec.cachedTokens);
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

/** The usage-only chunk after the last token (`choices: []`). */
export function openaiUsageLine(completionTokens: number, cachedTokens?: number): string {
  const chunk = { id: "cmpl-t", object: "text_completion", created: 1, model: "m", choices: [], usage: usageOf(completionTokens, cachedTokens) };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

function usageOf(completionTokens: number, cachedTokens: number | undefined): Record<string, unknown> {
  const usage: Record<string, unknown> = { prompt_tokens: 5, total_tokens: 5 + completionTokens, completion_tokens: completionTokens };
  if (cachedTokens !== undefined) usage.prompt_tokens_details = { cached_tokens: cachedTokens };
  return usage;
}

/** The final line of every SGLang stream. */
export const DONE_LINE = "data: [DONE]\n\n";

/** Streams `steps` as a 200 text/event-stream body, then ends it as `end` says. */
export function startScriptedServer(steps: ScriptStep[], end: ScriptEnd = "close"): TestServer {
  if (end === "destroy") return startRawServer(steps);
  const seen = newSeen();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      await record(seen, req);
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          try {
            for (const step of steps) {
              if (step.afterMs > 0) await Bun.sleep(step.afterMs);
              controller.enqueue(encoder.encode(step.raw));
            }
            if (end === "close") controller.close();
          } catch {
            // the client went away: nothing to do
          }
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream; charset=utf-8" } });
    },
  });
  return withStop(seen, `http://127.0.0.1:${server.port}/generate`, () => server.stop(true));
}

/** Sends an event every `intervalMs` forever: bytes keep flowing, the request never ends. */
export function startEndlessServer(intervalMs: number): TestServer {
  const seen = newSeen();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      await record(seen, req);
      let count = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          await Bun.sleep(intervalMs);
          count++;
          controller.enqueue(encoder.encode(sglangEventLine({ text: "x".repeat(count), completionTokens: count })));
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    },
  });
  return withStop(seen, `http://127.0.0.1:${server.port}/generate`, () => server.stop(true));
}

/** Answers every request with `status` and `body` (no stream), after `delayMs`. */
export function startStatusServer(status: number, body: string, delayMs = 0): TestServer {
  const seen = newSeen();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      await record(seen, req);
      if (delayMs > 0) await Bun.sleep(delayMs);
      return new Response(body, { status, headers: { "content-type": "application/json" } });
    },
  });
  return withStop(seen, `http://127.0.0.1:${server.port}/generate`, () => server.stop(true));
}

/** One canned answer of startSequenceServer. */
export interface CannedResponse {
  status: number;
  body: string;
}

/**
 * Answers the n-th request with responses[n] (the last one repeats), whatever the path: for flush and
 * discovery calls. `url` is the base URL (no path).
 */
export function startSequenceServer(responses: CannedResponse[]): TestServer {
  const seen = newSeen();
  let served = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      await record(seen, req);
      const canned = responses[Math.min(served++, responses.length - 1)] ?? { status: 500, body: "no response scripted" };
      return new Response(canned.body, { status: canned.status, headers: { "content-type": "application/json" } });
    },
  });
  return withStop(seen, `http://127.0.0.1:${server.port}`, () => server.stop(true));
}

/** A URL on which nothing listens (a port just released). */
export function closedPortUrl(): string {
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  const port = server.port;
  server.stop(true);
  return `http://127.0.0.1:${port}/generate`;
}

/**
 * Raw HTTP/1.1 over TCP: a chunked 200 response with the scripted writes as chunks, then the socket is
 * terminated without the final zero-length chunk (a server process dying mid-stream).
 */
function startRawServer(steps: ScriptStep[]): TestServer {
  const seen = newSeen();
  const listener = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      async data(socket, data) {
        if (seen.rawStarted.has(socket)) return; // the rest of a request split over packets
        seen.rawStarted.add(socket);
        seen.bodies.push(new TextDecoder().decode(data));
        seen.contentTypes.push(null);
        socket.write("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n");
        for (const step of steps) {
          if (step.afterMs > 0) await Bun.sleep(step.afterMs);
          const bytes = encoder.encode(step.raw);
          socket.write(`${bytes.length.toString(16)}\r\n`);
          socket.write(bytes);
          socket.write("\r\n");
        }
        await Bun.sleep(20);
        socket.terminate();
      },
    },
  });
  return withStop(seen, `http://127.0.0.1:${listener.port}/generate`, () => listener.stop(true));
}

interface Seen {
  bodies: string[];
  contentTypes: (string | null)[];
  headers: Record<string, string>[];
  requests: string[];
  rawStarted: WeakSet<object>;
}

function newSeen(): Seen {
  return { bodies: [], contentTypes: [], headers: [], requests: [], rawStarted: new WeakSet() };
}

async function record(seen: Seen, req: Request): Promise<void> {
  seen.contentTypes.push(req.headers.get("content-type"));
  seen.headers.push(Object.fromEntries(req.headers.entries()));
  const url = new URL(req.url);
  seen.requests.push(`${req.method} ${url.pathname}${url.search}`);
  seen.bodies.push(await req.text());
}

function withStop(seen: Seen, url: string, stop: () => void): TestServer {
  return { url, bodies: seen.bodies, contentTypes: seen.contentTypes, headers: seen.headers, requests: seen.requests, stop };
}
