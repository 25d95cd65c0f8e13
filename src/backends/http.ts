/** The backends' control calls (preflight, flush, model discovery): never on the hot path. */
import { BenchError } from "../errors.ts";
import { deadlineSignal, interruptedError, sleepUnlessInterrupted } from "../interrupt.ts";

/** Where control calls go, with what credentials, and the run's interrupt. */
export interface Control {
  /** Server base URL without a trailing slash. */
  baseUrl: string;
  /** Sent with every call (Authorization when --api-key is set). */
  headers: Record<string, string>;
  /** The run's interrupt: aborting it stops any call at once with an exit-130 BenchError. */
  signal?: AbortSignal;
  /** Never reuse a pooled connection (Backend.freshConnections). */
  freshConnections?: boolean;
  /** The most bytes read of one control answer; MAX_CONTROL_BODY_BYTES when absent (controlBodyLimit). */
  maxBodyBytes?: number;
}

/** The most bytes `ctl`'s control calls read of one answer. */
export const controlBodyLimit = (ctl: Pick<Control, "maxBodyBytes">): number => ctl.maxBodyBytes ?? MAX_CONTROL_BODY_BYTES;

// Socket error codes (Node and Bun spellings) in words a user reads at once; the code follows in parentheses.
const WHY_BY_CODE: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ConnectionRefused: "connection refused",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host not found",
  ECONNRESET: "connection reset",
  ConnectionClosed: "connection closed",
  ETIMEDOUT: "timed out",
  TimeoutError: "timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
};

/** A clear one-line error for a server that cannot be reached at all. */
export function unreachable(baseUrl: string, err: unknown): BenchError {
  const e = err as { code?: string; name?: string; message?: string } | null;
  const code = e?.code ?? (e?.name === "TimeoutError" ? "TimeoutError" : undefined);
  const words = code === undefined ? undefined : WHY_BY_CODE[code];
  // A code nobody named (0.3 printed a bare "23") goes out with the error's own message beside it.
  const message = e?.message && e.message !== code ? e.message : null;
  const why =
    words !== undefined ? `${words} (${code})` : code !== undefined ? `${message ?? "connection failed"} (error code ${code})` : (message ?? String(err));
  return new BenchError(`cannot reach the server at ${baseUrl}: ${why}`);
}

/** Options of one control call. */
export interface ControlRequest {
  method?: "GET" | "POST";
  /** Whole-call limit; the run's interrupt still ends it sooner. */
  timeoutMs: number;
  body?: string;
}

/**
 * One control call. A network failure becomes the `unreachable` BenchError, an interrupt the exit-130 one;
 * HTTP statuses are left to the caller. The body is read by the caller under the same deadline.
 */
export async function controlFetch(ctl: Control, path: string, r: ControlRequest): Promise<Response> {
  const method = r.method ?? "GET";
  if (ctl.signal?.aborted) throw interruptedError(`before ${method} ${path}`);
  const headers = r.body === undefined ? ctl.headers : { "content-type": "application/json", ...ctl.headers };
  try {
    const init: RequestInit = { method, headers, body: r.body, signal: deadlineSignal(ctl.signal, r.timeoutMs) };
    if (ctl.freshConnections === true) init.keepalive = false;
    return await fetch(ctl.baseUrl + path, init);
  } catch (err) {
    if (ctl.signal?.aborted) throw interruptedError(`during ${method} ${path}`);
    throw unreachable(ctl.baseUrl, err);
  }
}

/**
 * The most bytes read of one control call's answer (/server_info, /metrics, /v1/models, /props, /slots, a flush):
 * 64 MiB. SGLang's /server_info, the largest legitimate one, is tens of KB (every server argument, internal states);
 * a Prometheus page of thousands of series is a few MB. Past it the server is broken or hostile: reading on would
 * only grow this process's memory (a 3 GB /server_info once reached 2.5 GB of RSS).
 */
export const MAX_CONTROL_BODY_BYTES = 64 * 1024 * 1024;

/** A byte count as a user reads it: whole MiB where it is one, else bytes. */
export const mib = (bytes: number): string => (bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`);

/** A body read up to a limit: its first bytes, and whether more was there (then the rest was not read). */
export interface CappedBody {
  bytes: Uint8Array;
  over: boolean;
}

/**
 * Reads a response body up to `maxBytes`; a longer one (by its Content-Length, or as it arrives) is cancelled at the
 * limit, so memory stays within it. Rejects as the body's own read would (a socket error, an abort).
 */
export async function readCapped(res: Response, maxBytes: number): Promise<CappedBody> {
  const declared = Number(res.headers.get("content-length") ?? Number.NaN);
  if (res.body === null) return { bytes: new Uint8Array(0), over: false };
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body.cancel().catch(() => {});
    return { bytes: new Uint8Array(0), over: true };
  }
  const reader = res.body.getReader();
  const pieces: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (length + value.length > maxBytes) {
      pieces.push(value.subarray(0, maxBytes - length));
      length = maxBytes;
      await reader.cancel().catch(() => {});
      return { bytes: join(pieces, length), over: true };
    }
    pieces.push(value);
    length += value.length;
  }
  return { bytes: join(pieces, length), over: false };
}

function join(pieces: readonly Uint8Array[], length: number): Uint8Array {
  if (pieces.length === 1) return pieces[0]!;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const piece of pieces) {
    out.set(piece, offset);
    offset += piece.length;
  }
  return out;
}

// "Bearer <token>" as an Authorization header, or a proxy's echo of one, writes it (RFC 6750's token68 characters).
const BEARER = /\b(bearer)(\s+)[A-Za-z0-9\-._~+/]+=*/gi;

/**
 * Text from a server with every credential this client sent taken out: a proxy that echoes the request's headers in
 * its 401 page must not get the API key printed, logged or written into the results. Any `Bearer <token>` becomes
 * `Bearer (redacted)`, and the value of every credential header sent (`headers`) is replaced wherever it appears.
 */
export function redactCredentials(text: string, headers: Record<string, string> = {}): string {
  let out = text.replace(BEARER, "$1$2(redacted)");
  for (const [name, value] of Object.entries(headers)) {
    if (!/^(authorization|proxy-authorization|x-api-key|api-key)$/i.test(name)) continue;
    const secret = value.replace(/^bearer\s+/i, "").trim();
    // A secret of a few characters would redact ordinary words; one that short is no real key.
    if (secret.length >= 8) out = out.split(secret).join("(redacted)");
  }
  return out;
}

/**
 * The response body as text, at most controlBodyLimit(ctl) (a longer answer is one clear BenchError naming the
 * endpoint and the limit), credentials echoed back redacted; an interrupt while it streams in is an interrupt, not a
 * broken server.
 */
export async function controlText(ctl: Control, res: Response, path: string): Promise<string> {
  let read: CappedBody;
  const limit = controlBodyLimit(ctl);
  try {
    read = await readCapped(res, limit);
  } catch (err) {
    if (ctl.signal?.aborted) throw interruptedError(`during ${path}`);
    throw unreachable(ctl.baseUrl, err);
  }
  if (read.over) {
    throw new BenchError(
      `${path} answered more than ${mib(limit)}, the most warmbench reads from a control endpoint: the server at ${ctl.baseUrl} is broken or is not an LLM server`,
    );
  }
  return redactCredentials(new TextDecoder().decode(read.bytes), ctl.headers);
}

/** Retry pacing of the flush loops: 100 ms doubling up to 2 s. */
function nextBackoffMs(backoffMs: number): number {
  return Math.min(backoffMs * 2, 2000);
}

/**
 * The flush loop every backend shares: `attempt()` returns null when done, or a short note of why the server is
 * still busy; busy answers are retried with backoff until `deadlineS`, then `giveUp(attempts, lastNote)` is thrown.
 * Errors that will not get better are thrown by `attempt()` itself. An interrupt ends the backoff at once.
 */
export async function retryWhileBusy(
  o: { deadlineS: number; sleep?: (ms: number) => Promise<void>; signal?: AbortSignal },
  attempt: () => Promise<string | null>,
  giveUp: (attempts: number, lastNote: string) => BenchError,
): Promise<{ attempts: number }> {
  const sleep = o.sleep ?? ((ms: number) => sleepUnlessInterrupted(ms, o.signal, "while retrying the cache flush"));
  const deadline = performance.now() + o.deadlineS * 1000;
  let backoffMs = 100;
  for (let attempts = 1; ; attempts++) {
    const busy = await attempt();
    if (busy === null) return { attempts };
    if (performance.now() + backoffMs > deadline) throw giveUp(attempts, busy);
    await sleep(backoffMs);
    backoffMs = nextBackoffMs(backoffMs);
  }
}
