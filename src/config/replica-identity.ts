/**
 * Which replica a base URL names: two spellings of one server (`http://127.0.0.1:P` and `http://localhost:P`, a host
 * in capitals) are one replica, and a run that listed both would route half its requests to the same server while
 * reporting two (0.4 took them as two).
 */

/** Names of this machine's loopback interface, all one replica: localhost resolves to one of them. */
const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]", "localhost."]);

/** The replica a (parsed, normalised) base URL names: its scheme, host and port, loopback spellings made one. */
function replicaIdentity(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return baseUrl;
  }
  const host = url.hostname.toLowerCase();
  const port = url.port === "" ? (url.protocol === "https:" ? "443" : "80") : url.port;
  return `${url.protocol}//${LOOPBACK.has(host) ? "loopback" : host}:${port}${url.pathname.replace(/\/+$/, "")}`;
}

/** The first replica named twice (by any spelling), as "A and B", or null when every one is distinct. */
export function replicaNamedTwice(baseUrls: readonly string[]): string | null {
  const seen = new Map<string, string>();
  for (const u of baseUrls) {
    const id = replicaIdentity(u);
    const first = seen.get(id);
    if (first !== undefined) return first === u ? u : `${first} and ${u} are one server`;
    seen.set(id, u);
  }
  return null;
}
