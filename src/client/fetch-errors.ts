/** What a fetch error says, in the record's terms: whether a connection was made at all, and one short line. */

const CONNECT_ERROR_CODES = new Set([
  "ECONNREFUSED",
  "ConnectionRefused",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "EAI_AGAIN",
  "FailedToOpenSocket",
  "UnableToConnect",
]);

/** A failure to reach the server at all (no connection made): refused, unresolvable, unroutable. */
export function isConnectError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && CONNECT_ERROR_CODES.has(code);
}

/** A fetch error in one short line: its code first when the message does not already start with it. */
export function errorText(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  const short = message.split(". ")[0] ?? message;
  return typeof code === "string" && !short.startsWith(code) ? `${code}: ${short}` : short;
}
