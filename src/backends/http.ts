/** Small HTTP helpers of the backends' control calls (flush, info, model discovery); not used on the hot path. */
import { BenchError } from "../errors.ts";

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
  const why = words !== undefined ? `${words} (${code})` : (code ?? e?.message ?? String(err));
  return new BenchError(`cannot reach the server at ${baseUrl}: ${why}`);
}

/** fetch() whose network failure becomes the `unreachable` BenchError; HTTP statuses are left to the caller. */
export async function fetchOrThrow(baseUrl: string, path: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(baseUrl + path, init);
  } catch (err) {
    throw unreachable(baseUrl, err);
  }
}

/** Retry pacing of the flush loops: 100 ms doubling up to 2 s. */
function nextBackoffMs(backoffMs: number): number {
  return Math.min(backoffMs * 2, 2000);
}

/**
 * The flush loop both backends share: `attempt()` returns null when done, or a short note of why the server is
 * still busy; busy answers are retried with backoff until `deadlineS`, then `giveUp(attempts, lastNote)` is thrown.
 * Errors that will not get better are thrown by `attempt()` itself.
 */
export async function retryWhileBusy(
  o: { deadlineS: number; sleep?: (ms: number) => Promise<void> },
  attempt: () => Promise<string | null>,
  giveUp: (attempts: number, lastNote: string) => BenchError,
): Promise<{ attempts: number }> {
  const sleep = o.sleep ?? defaultSleep;
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

/** The default sleep of the flush loops (tests inject their own). */
const defaultSleep = (ms: number): Promise<void> => Bun.sleep(ms);
