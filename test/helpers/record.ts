/**
 * One measured request's record for unit tests: every field of a plain successful request (an answer of 2 tokens to a
 * prompt of 1000, nothing cached, no tiers), then the test's own values. Tests name only what they are about, and a
 * field added to RequestRecord is added here once.
 */
import type { RequestRecord } from "../../src/schema/record.ts";

export function makeRecord(over: Partial<RequestRecord> = {}): RequestRecord {
  const ok = over.ok ?? true;
  return {
    index: 0,
    ok,
    failureKind: ok ? null : "http",
    failureMessage: "",
    httpStatus: 200,
    promptLen: 1000,
    intendedMs: 0,
    startMs: 0,
    firstTokenMs: 1,
    lastEventMs: 2,
    ttftMs: 1,
    latencyMs: 2,
    outputLen: 2,
    cachedTokens: 0,
    cachedDeviceTokens: -1,
    cachedHostTokens: -1,
    cachedStorageTokens: -1,
    itlMs: new Float64Array(1),
    tokenEvents: 2,
    finishReason: "length",
    generatedText: "",
    ...over,
  };
}
