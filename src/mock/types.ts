/** Shapes the mock server exposes to tests and to `GET /mock/stats`. */

/** One /generate request as the mock understood it. */
export interface ReceivedRequest {
  /** The request's rid, or the one the mock generated (uuid4 hex, as SGLang). */
  rid: string;
  /** Prompt token ids; kept only with recordInputs, else []. */
  inputIds: number[];
  maxNewTokens: number;
  temperature: number;
  ignoreEos: boolean;
  stream: boolean;
  /** Prompt tokens served from the prefix cache; -1 until prefill starts (or if it never did). */
  cachedTokens: number;
}

/** Counters of a running mock server. */
export interface MockStats {
  /** /generate requests received, rejected ones included. */
  generateRequests: number;
  /** Requests admitted now (prefilling or decoding). */
  running: number;
  /** Requests waiting for a running slot now. */
  queued: number;
  /** Highest running + queued observed: the concurrency the server actually saw. */
  maxRunning: number;
  /** Highest number of /generate HTTP requests open at once (from receipt to the end of the response). */
  maxInFlight: number;
  /** Successful cache flushes. */
  flushes: number;
  /** Flushes answered 400 (busy, timed out, another flush in progress). */
  flushRejected: number;
  /** Tokens held in the prefix cache now. */
  cacheTokens: number;
  /** Tokens evicted from the prefix cache (LRU) so far. */
  evictedTokens: number;
  received: ReceivedRequest[];
}

/** Mutable counters shared by the request handlers. */
export interface MockCounters {
  generateRequests: number;
  inFlight: number;
  maxInFlight: number;
  flushes: number;
  flushRejected: number;
  received: ReceivedRequest[];
}
