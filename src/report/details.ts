/**
 * --request-details: one JSONL line per measured request, written after its pct (or multi-turn round) ended (never
 * during the timed section), so a run can be joined with a server's own log (the mock's --truth) on request_id.
 */
import { appendFileSync } from "node:fs";
import { toEpochMs } from "../client/clock.ts";
import type { RequestRecord } from "../metrics/record.ts";

/** The id sent as x-request-id; unique per run, pct, rate (when --request-rate sweeps several) and prompt. */
export const requestIdOf = (runId: string, pct: number, index: number, rate: number | null = null): string =>
  rate === null ? `${runId}-${pct}-${index}` : `${runId}-${pct}@${rate}-${index}`;

/** The id of a multi-turn turn; unique per run, client and round. */
export const turnRequestIdOf = (runId: string, client: number, round: number): string => `${runId}-c${client}-r${round}`;

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
  };
}

/** One details line of one record; `rate` is the line's request rate (Infinity in a closed loop). */
export function formatRequestDetail(runId: string, pct: number, r: RequestRecord, rate: number, rateInId: boolean): string {
  return JSON.stringify({
    request_id: requestIdOf(runId, pct, r.index, rateInId ? rate : null),
    pct,
    // JSON has no Infinity: a closed loop's rate is written as null.
    request_rate: Number.isFinite(rate) ? rate : null,
    index: r.index,
    ...recordFields(r),
  });
}

/** One details line of a multi-turn turn. */
export function formatTurnDetail(runId: string, client: number, round: number, expectedCachedTokens: number, r: RequestRecord): string {
  return JSON.stringify({
    request_id: turnRequestIdOf(runId, client, round),
    client,
    round,
    expected_cached_tokens: expectedCachedTokens,
    ...recordFields(r),
  });
}

/** Appends every record of one line in a single write. */
export function appendRequestDetails(path: string, runId: string, pct: number, records: RequestRecord[], rate: number, rateInId: boolean): void {
  if (records.length === 0) return;
  appendFileSync(path, records.map((r) => formatRequestDetail(runId, pct, r, rate, rateInId)).join("\n") + "\n");
}
