/** Shapes the mock server exposes to tests and to `GET /mock/stats`. */

/** One /generate or /v1/completions request as the mock understood it. */
export interface ReceivedRequest {
  /** The request's rid, or the one the mock generated (uuid4 hex, as SGLang); "cmpl-..." for /v1/completions. */
  rid: string;
  /** Prompt token ids; kept only with recordInputs, else []. */
  inputIds: number[];
  /** max_new_tokens (or max_tokens for /v1/completions). */
  maxNewTokens: number;
  temperature: number;
  ignoreEos: boolean;
  stream: boolean;
  /** Prompt tokens served from the prefix cache; -1 until prefill starts (or if it never did). */
  cachedTokens: number;
  /** llama.cpp's id_slot the request was pinned to; null or absent when not pinned. */
  idSlot?: number | null;
}

/** Counters of a running mock server. */
export interface MockStats {
  /** /generate requests received, rejected ones included. */
  generateRequests: number;
  /** /v1/completions requests received, rejected ones included. */
  completionsRequests: number;
  /** Requests admitted now (prefilling or decoding). */
  running: number;
  /** Requests waiting for a running slot now. */
  queued: number;
  /** Highest running + queued observed: the concurrency the server actually saw. */
  maxRunning: number;
  /** Highest number of /generate and /v1/completions requests open at once (from receipt to the end of the response). */
  maxInFlight: number;
  /** Successful cache flushes. */
  flushes: number;
  /** Flushes answered 400 (busy, timed out, another flush in progress) or /reset_prefix_cache success false. */
  flushRejected: number;
  /** Tokens held in the prefix cache now. */
  cacheTokens: number;
  /** Tokens evicted from the device tier (LRU) so far; with the host tier on they moved there. */
  evictedTokens: number;
  /** Tokens held in the host tier now (0 when it is off). */
  hostCacheTokens: number;
  /** TCP connections open now. */
  openConnections: number;
  /** Injected faults by kind: fail, error-event, abort, reset, stall, malformed, invalid-utf8, slow-headers,
   * flush-fail, reset-prefix-fail, flush-lie, exit, forget (a request that recomputed a cached prompt). */
  faultsInjected: Record<string, number>;
  received: ReceivedRequest[];
}

/** Mutable counters shared by the request handlers. */
export interface MockCounters {
  generateRequests: number;
  completionsRequests: number;
  inFlight: number;
  maxInFlight: number;
  flushes: number;
  flushRejected: number;
  received: ReceivedRequest[];
}
