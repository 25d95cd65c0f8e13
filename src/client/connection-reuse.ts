/**
 * Whether a streamed request may go out on a pooled (kept-alive) connection, and whether its failure was a stale
 * pooled connection's, worth one more try on a fresh one.
 *
 * Why: llama.cpp's server (cpp-httplib) closes the connection after every streamed response, although its headers
 * say `Keep-Alive: timeout=5, max=100` and never `Connection: close`. Bun puts the connection back in its pool as soon
 * as the last chunk is read; the server's FIN comes a moment later, and a request written in between lands on a
 * socket the server has closed: ECONNRESET before any byte, at a latency of 0.2 ms (1 to 3 requests in 20 sent one at
 * a time through /v1/completions with `--backend openai`). The native backend always asked for fresh connections;
 * here any backend learns it from the server's own `Server: llama.cpp` header, on the first answer.
 */

/** Origins (scheme://host:port) whose server closes every streamed response's connection: sent on fresh connections. */
const closingOrigins = new Set<string>();

/** The origin of a request URL, the key of closingOrigins. */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/** True when requests to `url` must open a fresh connection: the backend says so, or the server was seen to close. */
export function needsFreshConnection(url: string, backendWantsFresh: boolean): boolean {
  // Parsing the URL costs a microsecond a request: only once some server was seen to close.
  return backendWantsFresh || (closingOrigins.size > 0 && closingOrigins.has(originOf(url)));
}

/** The servers known to close the connection after each streamed response (the `Server` header's value). */
const CLOSES_AFTER_STREAM = /^llama\.cpp\b/i;

/** Reads a response's `Server` header: a server known to close after streaming sends later requests fresh. */
export function noteServer(url: string, serverHeader: string | null): void {
  if (serverHeader !== null && CLOSES_AFTER_STREAM.test(serverHeader)) closingOrigins.add(originOf(url));
}

/** Socket errors that mean the peer had closed the connection (Bun and Node spellings). */
const CLOSED_BY_PEER = new Set(["ECONNRESET", "ConnectionClosed", "EPIPE", "ECONNABORTED"]);

/**
 * How soon after the send a stale connection's failure comes: the first write meets the peer's reset within a round
 * trip (0.2 ms on 127.0.0.1). A reset later than this came from a server that took the request and then dropped it
 * (it crashed, it was killed mid-prefill): sending it again would only load that server twice.
 */
const STALE_WITHIN_MS = 1000;

/**
 * A fetch rejection that a stale pooled connection explains: the peer closed it (reset, closed, broken pipe) before
 * any byte of the answer came, and at once (`elapsedMs` after the send). A refused connect is not one (no connection
 * was made), nor our own abort.
 */
export function isStaleConnectionError(err: unknown, elapsedMs: number): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && CLOSED_BY_PEER.has(code) && elapsedMs <= STALE_WITHIN_MS;
}
