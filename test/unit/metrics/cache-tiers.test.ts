/** Where the hits came from, and cache pressure against capacity: pure functions over records. */
import { describe, expect, test } from "bun:test";
import { cachePressure } from "../../../src/metrics/cache-pressure.ts";
import { servingTier, tierStats } from "../../../src/metrics/cache-tiers.ts";
import type { RequestRecord } from "../../../src/schema/record.ts";
import { makeRecord } from "../../helpers/record.ts";

function rec(ttftMs: number, cached: number, device: number, host: number, storage = 0, ok = true): RequestRecord {
  return makeRecord({
    ok,
    firstTokenMs: 0,
    lastEventMs: 0,
    ttftMs,
    latencyMs: 50,
    cachedTokens: cached,
    cachedDeviceTokens: device,
    cachedHostTokens: host,
    cachedStorageTokens: storage,
  });
}

describe("tierStats", () => {
  test("tokens per tier and TTFT by the deepest tier each prefix needed", () => {
    const records = [
      rec(10, 512, 512, 0),
      rec(12, 512, 512, 0),
      rec(30, 512, 128, 384),
      rec(50, 512, 0, 128, 384),
      rec(80, 0, 0, 0),
      rec(5, 512, 512, 0, 0, false),
    ];
    expect(records.map((r) => servingTier(r))).toEqual(["device", "device", "host", "storage", "none", "device"]);
    const s = tierStats(records);
    expect(s.cachedTokensByTier).toEqual({ device: 1152, host: 512, storage: 384 });
    expect(s.ttftByTier!.device).toEqual({ requests: 2, mean_ttft_ms: 11, median_ttft_ms: 11, p99_ttft_ms: 11.98, mean_cached_tokens: 512 });
    expect(s.ttftByTier!.host!.requests).toBe(1);
    expect(s.ttftByTier!.storage!.mean_ttft_ms).toBe(50);
    expect(s.ttftByTier!.none!.mean_cached_tokens).toBe(0);
  });

  test("a server without the breakdown: null", () => {
    expect(tierStats([rec(10, 512, -1, -1, -1)])).toEqual({ cachedTokensByTier: null, ttftByTier: null });
  });
});

describe("cachePressure", () => {
  test("shortfall against each record's lower bound, and the working set against capacity", () => {
    const records = [rec(1, 512, 512, 0), rec(1, 256, 256, 0), rec(1, 0, 0, 0, 0, false)];
    const p = cachePressure(records, () => 512, 9000, { deviceTokens: 8000, hostTokens: 16000 });
    expect(p).toEqual({
      working_set_tokens: 9000,
      cache_capacity_tokens: 8000,
      host_cache_capacity_tokens: 16000,
      working_set_fits: false,
      cache_shortfall_requests: 1,
      eviction: true,
    });
    expect(cachePressure(records, () => 256, 100, { deviceTokens: null, hostTokens: null })).toMatchObject({ working_set_fits: null, eviction: false });
    expect(cachePressure([rec(1, -1, -1, -1)], () => 1, 1, { deviceTokens: 1, hostTokens: null })).toMatchObject({
      cache_shortfall_requests: null,
      eviction: null,
    });
  });
});
