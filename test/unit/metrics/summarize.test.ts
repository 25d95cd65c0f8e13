import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { FailureKind, RequestRecord } from "../../../src/schema/record.ts";
import { decodeHistogram } from "../../../src/metrics/histograms.ts";
import {
  cachedTokenStats,
  MAX_ERROR_ENTRIES,
  MAX_ERROR_MESSAGE_CHARS,
  requestMetrics,
  scriptPlaceKeys,
  type ScriptPlace,
} from "../../../src/metrics/summarize.ts";
import { buildLine } from "../../../src/schema/build-line.ts";
import { KEYS_OF } from "../../../src/schema/lines.ts";
import { summarizeIntended } from "../../../src/metrics/intended.ts";
import { parseJsonlLine } from "../../../src/report/jsonl.ts";
import { scriptMetricCases, type FixtureRecord } from "../../helpers/script-metric-cases.ts";

const FIXTURES = join(import.meta.dir, "../../fixtures/metrics");

/** Recorded requests with failures, from the script-metrics parity fixture (script-metrics.test.ts checks the numbers). */
const mixed = scriptMetricCases.cases.find((c) => c.name === "failures-mixed")!.records;
const wordCount = (text: string): number => text.split(/\s+/).filter((w) => w !== "").length;

function makeRecord(index: number, over: Partial<RequestRecord> = {}): RequestRecord {
  return {
    index,
    ok: true,
    failureKind: null,
    failureMessage: "",
    httpStatus: 200,
    promptLen: 100,
    intendedMs: 0,
    startMs: 0,
    firstTokenMs: 10,
    lastEventMs: 30,
    ttftMs: 10,
    latencyMs: 30,
    outputLen: 3,
    cachedTokens: 64,
    cachedDeviceTokens: -1,
    cachedHostTokens: -1,
    cachedStorageTokens: -1,
    itlMs: Float64Array.of(10, 10),
    tokenEvents: 3,
    finishReason: "length",
    generatedText: "a b c",
    ...over,
  };
}

/** Every fifth successful record reports a cache miss of one page. */
function fromFixture(r: FixtureRecord, index: number): RequestRecord {
  return makeRecord(index, {
    ok: r.ok,
    failureKind: r.ok ? null : "http",
    failureMessage: r.ok ? "" : "Bad Request: boom",
    httpStatus: r.ok ? 200 : 400,
    promptLen: r.promptLen,
    ttftMs: r.ttftMs,
    latencyMs: r.latencyMs,
    outputLen: r.outputLen,
    itlMs: Float64Array.from(r.itlMs),
    generatedText: r.generatedText,
    cachedTokens: !r.ok ? -1 : index % 5 === 0 ? 48 : 64,
  });
}

const place: ScriptPlace = {
  backend: "sglang",
  requestRate: Infinity,
  maxConcurrency: 4,
  pct: 90,
  prefixLen: 63,
  suffixLen: 7,
  totalTokens: 70,
  numPrompts: 64,
  outputLen: 40,
};

/** Key order of the script's maybe_write_summary_jsonl, read from a line it wrote. */
const SCRIPT_KEYS = Object.keys(parseJsonlLine(readFileSync(join(FIXTURES, "script_results.jsonl"), "utf8").split("\n")[0]!));

describe("a sweep line's script part: where it sits and its request metrics", () => {
  const records = mixed.map(fromFixture);
  const metrics = requestMetrics(records, 3.217, wordCount);
  // A sweep line's histograms include those of the latency from the intended send (engine/summarize.ts adds them).
  const requests = { ...metrics, hdr: { ...metrics.hdr, ...summarizeIntended(records, 0).hdr } };
  const line = buildLine("sweep", { place: scriptPlaceKeys(place), requests, cached: cachedTokenStats(records) });

  test("the builder puts the script's keys first, in its order, then ours from the same groups", () => {
    const keys = Object.keys(line);
    expect(keys.slice(0, SCRIPT_KEYS.length)).toEqual(SCRIPT_KEYS);
    // Ours in the table's order (not the groups'): the failures first, the schema's version last.
    const ours = keys.slice(SCRIPT_KEYS.length);
    expect(ours).toEqual(KEYS_OF.sweep.filter((k) => k in line && !SCRIPT_KEYS.includes(k)));
    expect([ours[0], ours.at(-1)]).toEqual(["failed", "schema_version"]);
    expect(ours).toContain("retried_connections");
    expect(ours.indexOf("hdr")).toBe(ours.indexOf("hdr_unit") - 1);
    expect(line.backend).toBe("sglang");
    expect(line.request_rate).toBe(Infinity);
    expect(line.dataset_name).toBe("warm-cache");
    expect(line.shared_prefix_pct).toBe(90);
  });

  test("hdr histograms hold the same samples in µs", () => {
    const ok = records.filter((r) => r.ok);
    const itlCount = ok.reduce((n, r) => n + r.itlMs.length, 0);
    expect(metrics.hdr_unit).toBe("us");
    expect(decodeHistogram(metrics.hdr.ttft_us).totalCount).toBe(ok.length);
    expect(decodeHistogram(metrics.hdr.e2e_latency_us).totalCount).toBe(ok.length);
    expect(decodeHistogram(metrics.hdr.itl_us).totalCount).toBe(itlCount);
    expect(decodeHistogram(metrics.hdr.tpot_us).totalCount).toBe(ok.filter((r) => r.outputLen > 1).length);
    const p50Us = decodeHistogram(metrics.hdr.ttft_us).getValueAtPercentile(50);
    expect(Math.abs(p50Us / 1000 - metrics.median_ttft_ms!) / metrics.median_ttft_ms!).toBeLessThan(0.02);
  });

  test("cache statistics over successful records that reported cached_tokens", () => {
    const reported = records.filter((r) => r.ok).map((r) => r.cachedTokens);
    const stats = cachedTokenStats(records);
    expect(stats.min_cached_tokens).toBe(48);
    expect(stats.max_cached_tokens).toBe(64);
    expect(stats.mean_cached_tokens).toBeCloseTo(reported.reduce((a, b) => a + b, 0) / reported.length, 10);
  });
});

describe("request metrics", () => {
  test("errors are bucketed by kind + truncated message, bounded, largest first", () => {
    const records: RequestRecord[] = [makeRecord(0)];
    const fail = (kind: FailureKind, message: string) =>
      records.push(makeRecord(records.length, { ok: false, failureKind: kind, failureMessage: message, outputLen: 0 }));
    for (let i = 0; i < 30; i++) fail("http", `Bad Request: distinct ${i}`);
    for (let i = 0; i < 3; i++) fail("timeout", "request timed out");
    const long = "x".repeat(500);
    fail("network", `${long}A`);
    fail("network", `${long}B`);
    const result = requestMetrics(records, 1, wordCount);
    expect(result.failed).toBe(35);
    expect(result.completed).toBe(1);
    expect(result.errors.length).toBe(MAX_ERROR_ENTRIES);
    expect(result.errors[0]).toEqual({ kind: "timeout", message: "request timed out", count: 3 });
    expect(result.errors[1]).toEqual({ kind: "network", message: "x".repeat(MAX_ERROR_MESSAGE_CHARS), count: 2 });
    expect(result.errors[2]).toEqual({ kind: "http", message: "Bad Request: distinct 0", count: 1 });
    expect(result.errors_by_kind).toEqual({ http: 30, timeout: 3, network: 2 });
  });

  test("no success: null (no sample) for ttft/tpot/itl/e2e, null cache stats", () => {
    const records = [makeRecord(0, { ok: false, failureKind: "connect", failureMessage: "refused", cachedTokens: -1 })];
    const result = requestMetrics(records, 2, wordCount);
    expect(result.completed).toBe(0);
    expect(result.mean_ttft_ms).toBeNull();
    expect(result.p99_itl_ms).toBeNull();
    expect(result.mean_e2e_latency_ms).toBeNull();
    expect(result.concurrency).toBe(0);
    expect(result.total_output).toBe(0);
    expect(cachedTokenStats(records)).toEqual({ mean_cached_tokens: null, min_cached_tokens: null, max_cached_tokens: null });
  });

  test("records that did not report cached_tokens are left out of the cache statistics", () => {
    const records = [makeRecord(0, { cachedTokens: -1 }), makeRecord(1, { cachedTokens: 32 })];
    expect(cachedTokenStats(records).mean_cached_tokens).toBe(32);
  });

  test("a reported 0 is a report: requests that found nothing cached count", () => {
    const records = [makeRecord(0, { cachedTokens: 0 }), makeRecord(1, { cachedTokens: 0 }), makeRecord(2, { cachedTokens: 16 })];
    expect(cachedTokenStats(records)).toEqual({ mean_cached_tokens: 16 / 3, min_cached_tokens: 0, max_cached_tokens: 16 });
  });
});
