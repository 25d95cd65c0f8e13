/** What one streamed request needs, and the record it fills: born empty, failed at most once (the first cause wins). */
import type { FailureKind, RequestRecord } from "../schema/record.ts";
import type { Backend } from "../backends/types.ts";
import type { RequestBody } from "./request-body.ts";

/** Everything one request needs; the body is serialized before any clock starts. */
export interface StreamRequest {
  url: string;
  /** The serialized body, whole or as parts sent in order without being joined (see request-body.ts). */
  body: RequestBody;
  /**
   * When the schedule meant this request to go out (nowMs clock): its arrival time in an open-loop run, the moment
   * its slot was free in a closed loop. The send itself is stamped just before fetch; absent, the two are equal.
   */
  intendedMs?: number;
  /** Wire format of the stream; SGLang native when absent. */
  backend?: Backend;
  /** Extra request headers (e.g. authorization); content-type is always application/json. */
  headers?: Record<string, string>;
  /** Sent as the x-request-id header when set. */
  requestId?: string;
  /** Index of the prompt within its set, copied to the record. */
  index: number;
  /** Prompt length in tokens, copied to the record. */
  promptLen: number;
  /** Sizes the ITL buffer (it grows if the server sends more). */
  maxNewTokens: number;
  /** Server text mode: whole text so far in each event, or deltas. Ignored by backends whose text is always a delta. */
  textMode: "cumulative" | "incremental";
  requestTimeoutMs: number;
  /** Fail the request when no byte arrives for this long. */
  stallTimeoutMs: number;
  /** Aborting it ends the request as "cancelled". */
  signal?: AbortSignal;
  /**
   * Leave generatedText to resolveGeneratedText(), called once every request of the pct has ended: decoding the
   * text when each stream ends would hold up the other streams' events.
   */
  deferText?: boolean;
  /**
   * Keep copies of the token events' payloads in the record (`payloads`; the last one alone for cumulative text),
   * for callers that read more than the text afterwards (multi-turn conversations read the server's output_ids).
   */
  keepPayloads?: boolean;
  /** A response header naming the replica that served it (behind a router: --replica-header); kept in `servedBy`. */
  servedByHeader?: string;
  /** The longest SSE line read, bytes; MAX_SSE_LINE_BYTES (16 MiB) when absent. A longer one fails the request. */
  maxSseLineBytes?: number;
}

export function emptyRecord(req: StreamRequest): RequestRecord {
  return {
    index: req.index,
    ok: true,
    failureKind: null,
    failureMessage: "",
    httpStatus: 0,
    promptLen: req.promptLen,
    intendedMs: 0,
    startMs: 0,
    firstTokenMs: 0,
    lastEventMs: 0,
    ttftMs: 0,
    latencyMs: 0,
    outputLen: 0,
    cachedTokens: -1,
    cachedDeviceTokens: -1,
    cachedHostTokens: -1,
    cachedStorageTokens: -1,
    itlMs: new Float64Array(0),
    tokenEvents: 0,
    finishReason: null,
    generatedText: "",
  };
}

/** Marks the record failed; the first failure wins, so a later symptom cannot hide the cause. */
export function fail(rec: RequestRecord, kind: FailureKind, message: string): RequestRecord {
  if (rec.ok) {
    rec.ok = false;
    rec.failureKind = kind;
    rec.failureMessage = message;
  }
  return rec;
}

export function abortMessage(kind: FailureKind, req: StreamRequest): string {
  if (kind === "timeout") return `request timeout after ${req.requestTimeoutMs} ms`;
  if (kind === "stall") return `no bytes for ${req.stallTimeoutMs} ms`;
  return "cancelled";
}
