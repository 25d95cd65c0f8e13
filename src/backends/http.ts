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
}

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

/** The response body as text; an interrupt while it streams in is an interrupt, not a broken server. */
export async function controlText(ctl: Control, res: Response, path: string): Promise<string> {
  try {
    return await res.text();
  } catch (err) {
    if (ctl.signal?.aborted) throw interruptedError(`during ${path}`);
    throw unreachable(ctl.baseUrl, err);
  }
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
