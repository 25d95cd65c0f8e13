/**
 * A small router for tests, in front of upstream servers as real routers stand: a POST of a generation request goes
 * to the upstream a hash of `keyHeader` picks (every upstream in turn when the header is absent), streamed back with
 * `X-Served-By: host:port` (as nginx's `$upstream_addr`); anything else goes to the first upstream. It imports
 * nothing from src/: it shares no code with the client it serves.
 */
export interface TestRouter {
  url: string;
  stop(): Promise<void>;
}

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

export function startTestRouter(upstreams: readonly string[], keyHeader: string | null): TestRouter {
  let next = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const generation = req.method === "POST" && /\/(generate|completions?)$/.test(url.pathname);
      const key = keyHeader === null ? null : req.headers.get(keyHeader);
      const index = !generation ? 0 : key !== null ? hash(key) % upstreams.length : next++ % upstreams.length;
      const upstream = upstreams[index]!;
      const headers = new Headers(req.headers);
      headers.delete("host");
      const res = await fetch(upstream + url.pathname + url.search, {
        method: req.method,
        headers,
        body: req.method === "GET" ? undefined : await req.arrayBuffer(),
      });
      const out = new Headers(res.headers);
      out.set("X-Served-By", new URL(upstream).host);
      return new Response(res.body, { status: res.status, headers: out });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, stop: async () => void server.stop(true) };
}
