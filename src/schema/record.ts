/**
 * The one contract between the hot path and everything else: one plain record per request.
 * streamRequest always resolves to one of these and never throws; failures are fields.
 */

/** Why a request failed. Counted per kind and message, never stored as unbounded lists. */
export type FailureKind =
  | "connect" // TCP connect refused / DNS / unreachable
  | "http" // non-200 status before streaming
  | "network" // socket error after the response started (reset, chunked-encoding error)
  | "timeout" // --request-timeout elapsed
  | "stall" // no bytes for the stall timeout
  | "server_error" // an {"error": ...} event inside a 200 stream
  | "abort" // finish_reason.type == "abort"
  | "truncated" // the stream ended before [DONE]
  | "no_tokens" // the stream ended without any token event
  | "parse" // an event that is not valid JSON
  | "protocol" // the stream broke a bound warmbench keeps (an SSE line past --sse-line-max-mib)
  | "cancelled"; // the run was interrupted (SIGINT/SIGTERM) before the request ended

export interface RequestRecord {
  /** Index of the prompt within its pct's prompt set. */
  index: number;
  ok: boolean;
  failureKind: FailureKind | null;
  /** Short human-readable reason; "" when ok. */
  failureMessage: string;
  /** HTTP status of the response, 0 when none arrived. */
  httpStatus: number;
  /** Prompt length in tokens. */
  promptLen: number;
  /**
   * When the schedule meant to send it, nowMs() clock: its arrival time (open loop) or the moment a slot was free
   * (closed loop). Latency "from intended" starts here, so time spent waiting for a slot or for the client counts.
   */
  intendedMs: number;
  /** Actual send time on the nowMs() clock (performance.now(), ms): the script's clock starts here. */
  startMs: number;
  /** Arrival of the first token event, nowMs() clock; 0 when none. */
  firstTokenMs: number;
  /** Arrival of the last SSE line received (normally [DONE]), nowMs() clock; 0 when none. */
  lastEventMs: number;
  /** Time to first token, ms from start: the first event whose completion_tokens >= 1. 0 when none. */
  ttftMs: number;
  /** The script's "latency": time of the last SSE line received (normally [DONE]), ms from start. */
  latencyMs: number;
  /** Server-reported completion_tokens at the last token event. */
  outputLen: number;
  /** Server-reported cached prompt tokens (meta_info.cached_tokens); -1 when not reported. */
  cachedTokens: number;
  /**
   * Of cachedTokens, those each cache tier served (SGLang HiCache meta_info.cached_tokens_details: device, host,
   * storage); -1 when the server does not report the breakdown.
   */
  cachedDeviceTokens: number;
  cachedHostTokens: number;
  cachedStorageTokens: number;
  /** Inter-token latencies, ms: each gap between token events spread evenly over the tokens it carried. */
  itlMs: Float64Array;
  /** Number of SSE events that carried at least one new token. */
  tokenEvents: number;
  /** finish_reason.type of the last event ("length", "stop", "abort", ...), null if never seen. */
  finishReason: string | null;
  /** Generated text (cumulative text of the last event, or the concatenated deltas). Filled after the stream ends. */
  generatedText: string;
  /** generatedText as raw JSON string content (still escaped), while its decoding is deferred (see resolveGeneratedText). */
  textBytes?: Uint8Array;
  /** Copies of the token events' payloads (the last alone for cumulative text), with StreamRequest.keepPayloads only. */
  payloads?: Uint8Array[];
  /** The response header StreamRequest.servedByHeader names (the replica a router chose); null when absent. */
  servedBy?: string | null;
  /**
   * True when the request's pooled connection had been closed by the server before any byte of the answer, and it was
   * sent once more on a fresh connection (src/client/connection-reuse.ts); absent otherwise. Its outcome is the retry's.
   */
  retriedConnection?: boolean;
  /** The cache slot that ran it, where the server names it (llama.cpp's final `id_slot`); absent otherwise. */
  slot?: number;
}
