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
        socket.write(
          "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
        );
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
  rawStarted: WeakSet<object>;
}

function newSeen(): Seen {
  return { bodies: [], contentTypes: [], rawStarted: new WeakSet() };
}

async function record(seen: Seen, req: Request): Promise<void> {
  seen.contentTypes.push(req.headers.get("content-type"));
  seen.bodies.push(await req.text());
}

function withStop(seen: Seen, url: string, stop: () => void): TestServer {
  return { url, bodies: seen.bodies, contentTypes: seen.contentTypes, stop };
}
