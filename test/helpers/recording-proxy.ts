/**
 * A recording HTTP proxy on 127.0.0.1 in front of a target server: records every request's method, path and
 * headers, forwards it with fetch and streams the response body back. An optional `intercept` answers a request
 * itself (e.g. a /flush_cache that turns busy after the first call) instead of forwarding it.
 */

/** One request as the proxy saw it. */
export interface ProxiedRequest {
  method: string;
  /** Path and query, e.g. "/flush_cache?timeout=30". */
  path: string;
  /** Header names lower-cased. */
  headers: Record<string, string>;
  /** The request body as text ("" for GET and HEAD). */
  body: string;
}

export interface RecordingProxy {
  /** Base URL without a trailing slash. */
  url: string;
  requests: ProxiedRequest[];
  stop(): Promise<void>;
}

/** Return a Response to answer a request yourself, or null to forward it. */
export type Intercept = (req: ProxiedRequest) => Response | null;

// Per-connection headers of one hop; fetch sets its own.
const HOP_HEADERS = new Set(["host", "connection", "keep-alive", "content-length", "transfer-encoding"]);

/** The headers passed on, and the address the client asked for as `x-forwarded-host` (as proxies say it). */
function forwardable(headers: Headers): Headers {
  const out = new Headers();
  for (const [name, value] of headers) if (!HOP_HEADERS.has(name)) out.set(name, value);
  const host = headers.get("host");
  if (host !== null) out.set("x-forwarded-host", host);
  return out;
}

/** Starts the proxy on an ephemeral port, forwarding to `targetUrl` (no trailing slash). */
export function startRecordingProxy(targetUrl: string, intercept: Intercept = () => null): RecordingProxy {
  const requests: ProxiedRequest[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    // Streams may be slow (stall faults); the client's own timeouts decide, not the proxy's.
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const seen: ProxiedRequest = {
        method: req.method,
        path: url.pathname + url.search,
        headers: Object.fromEntries(req.headers.entries()),
        body: "",
      };
      requests.push(seen);
      const own = intercept(seen);
      if (own !== null) return own;
      const body = req.method === "GET" || req.method === "HEAD" ? undefined : await req.arrayBuffer();
      if (body !== undefined) seen.body = new TextDecoder().decode(body);
      const upstream = await fetch(targetUrl + seen.path, { method: req.method, headers: forwardable(req.headers), body, redirect: "manual" });
      return new Response(upstream.body, { status: upstream.status, headers: forwardable(upstream.headers) });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    requests,
    stop: async () => {
      await server.stop(true);
    },
  };
}
