import { describe, expect, test } from "bun:test";
import { decodeHistogram } from "../../../src/metrics/histograms.ts";
import { summarizeIntended } from "../../../src/metrics/intended.ts";
import type { RequestRecord } from "../../../src/schema/record.ts";

/** A record sent `lagMs` after it was due at `intendedMs`, first token `ttftMs` and last event `latencyMs` after the send. */
function rec(intendedMs: number, lagMs: number, ttftMs: number, latencyMs: number, ok = true): RequestRecord {
  const startMs = intendedMs + lagMs;
  return {
    index: 0,
    ok,
    failureKind: ok ? null : "http",
    failureMessage: "",
    httpStatus: ok ? 200 : 503,
    promptLen: 10,
    intendedMs,
    startMs,
    firstTokenMs: ok ? startMs + ttftMs : 0,
    lastEventMs: ok ? startMs + latencyMs : 0,
    ttftMs: ok ? ttftMs : 0,
    latencyMs: ok ? latencyMs : 0,
    outputLen: 2,
    cachedTokens: 0,
    cachedDeviceTokens: -1,
    cachedHostTokens: -1,
    cachedStorageTokens: -1,
    itlMs: new Float64Array(1),
    tokenEvents: 2,
    finishReason: "length",
    generatedText: "",
  };
}

describe("summarizeIntended", () => {
  test("TTFT and E2E from the intended time include the wait before the send", () => {
    // Three requests due at 0, 100, 200 ms; the last two waited 50 and 150 ms for a slot.
    const records = [rec(1000, 0, 10, 30), rec(1100, 50, 10, 30), rec(1200, 150, 10, 30)];
    const { metrics, hdr } = summarizeIntended(records, 1000);
    expect(metrics.ttft_from_intended_mean_ms).toBeCloseTo((10 + 60 + 160) / 3, 9);
    expect(metrics.ttft_from_intended_median_ms).toBeCloseTo(60, 9);
    expect(metrics.e2e_from_intended_mean_ms).toBeCloseTo((30 + 80 + 180) / 3, 9);
    expect(metrics.schedule_lag_mean_ms).toBeCloseTo(200 / 3, 9);
    expect(metrics.schedule_lag_p99_ms).toBeCloseTo(50 + 0.98 * 100, 9); // numpy's linear interpolation
    // 3 sent over the 350 ms from the start of sending to the last send.
    expect(metrics.achieved_request_rate).toBeCloseTo(3 / 0.35, 9);
    expect(decodeHistogram(hdr.schedule_lag_us).totalCount).toBe(3);
    expect(decodeHistogram(hdr.ttft_from_intended_us).maxValue).toBeGreaterThanOrEqual(160_000);
  });

  test("without any wait the two kinds agree", () => {
    const records = [rec(0, 0, 12, 40), rec(5, 0, 14, 41)];
    const { metrics } = summarizeIntended(records, 0);
    expect(metrics.ttft_from_intended_mean_ms).toBe(13);
    expect(metrics.e2e_from_intended_mean_ms).toBe(40.5);
    expect(metrics.schedule_lag_p99_ms).toBe(0);
  });

  test("failed requests count in the lag (they were sent) but not in TTFT/E2E; empty series are null; all at once has no rate", () => {
    const { metrics } = summarizeIntended([rec(0, 3, 0, 0, false), rec(0, 1, 5, 9)], 0);
    expect(metrics.schedule_lag_mean_ms).toBe(2);
    expect(metrics.ttft_from_intended_mean_ms).toBe(6);
    const none = summarizeIntended([], 0).metrics;
    expect(none.ttft_from_intended_p99_ms).toBeNull();
    expect(none.achieved_request_rate).toBe(0);
    expect(summarizeIntended([rec(7, 0, 1, 2)], 7).metrics.achieved_request_rate).toBeNull();
  });
});
