/**
 * --request-details: one JSONL line per measured request, written after its pct (or multi-turn round) ended (never
 * during the timed section), so a run can be joined with a server's own log (the mock's --truth) on request_id.
 */
import { toEpochMs } from "../client/clock.ts";
import type { RequestRecord } from "../schema/record.ts";
import { requestIdOf, turnRequestIdOf, type DetailLine } from "../engine/request-id.ts";

/** What every details line holds about its request. */
function recordFields(r: RequestRecord): Record<string, unknown> {
  return {
    ok: r.ok,
    failure_kind: r.failureKind,
    failure_message: r.failureMessage || null,
    http_status: r.httpStatus,
    intended_epoch_ms: toEpochMs(r.intendedMs),
    start_epoch_ms: toEpochMs(r.startMs),
    ttft_ms: r.ttftMs,
    latency_ms: r.latencyMs,
    prompt_len: r.promptLen,
    output_len: r.outputLen,
    cached_tokens: r.cachedTokens,
    cached_device_tokens: r.cachedDeviceTokens,
    cached_host_tokens: r.cachedHostTokens,
    cached_storage_tokens: r.cachedStorageTokens,
    token_events: r.tokenEvents,
    finish_reason: r.finishReason,
    itl_ms: Array.from(r.itlMs),
    // Sent once more on a fresh connection (the pooled one was closed under it): said where it happened, absent elsewhere.
    ...(r.retriedConnection === true ? { retried_connection: true } : {}),
  };
}

/** One details line of one record. */
export function formatRequestDetail(runId: string, line: DetailLine, r: RequestRecord): string {
  const { pct, rate } = line;
  return JSON.stringify({
    request_id: requestIdOf(runId, line.requestIdTag, r.index),
    pct,
    // JSON has no Infinity: a closed loop's rate is written as null.
    request_rate: Number.isFinite(rate) ? rate : null,
    index: r.index,
    ...recordFields(r),
    ...line.extra?.(r.index),
  });
}

/** A replayed request's details: its id and record, then what the replay adds (its trace line, its predicted range). */
export function formatReplayDetail(runId: string, r: RequestRecord, extra: Record<string, unknown>): string {
  return JSON.stringify({ request_id: requestIdOf(runId, "replay", r.index), index: r.index, ...recordFields(r), ...extra });
}

/** One details line of a multi-turn turn. */
export function formatTurnDetail(
  runId: string,
  client: number,
  round: number,
  expectedCachedTokens: number,
  r: RequestRecord,
  extra?: Record<string, unknown>,
): string {
  return JSON.stringify({
    request_id: turnRequestIdOf(runId, client, round),
    client,
    round,
    expected_cached_tokens: expectedCachedTokens,
    ...recordFields(r),
    ...extra,
  });
}
