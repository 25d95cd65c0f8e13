/**
 * Working-set pressure from the one cache model: the capacity it evicts at (device plus host tier) decides whether
 * the working set fits, and eviction is what the model's capacity took of an infinite cache's certain hits, not a
 * separate estimate. The ranges come from the model itself over a small schedule whose eviction is certain.
 */
import { describe, expect, test } from "bun:test";
import { UNKNOWN_BEHAVIOUR } from "../../../src/config/cache-behaviour.ts";
import { expectCache, type ModelRequest } from "../../../src/metrics/cache-model.ts";
import { cachePressure } from "../../../src/metrics/cache-pressure.ts";
import { modelCapacityOf } from "../../../src/metrics/point-expectations.ts";
import { makeRecord } from "../../helpers/record.ts";

const PAGE = 4;
/** Request k: prefix group `g` of 16 tokens, then 4 of its own; one at a time, 10 ms apart. */
function schedule(groups: readonly number[]): ModelRequest[] {
  return groups.map((g, k) => ({
    key: k,
    prompt: { hashIds: [1 + g, 1000 + k], ends: [16, 20], length: 20 },
    startMs: 10 * k,
    firstTokenMs: 10 * k + 1,
    endMs: 10 * k + 2,
    ok: true,
    generated: 1,
  }));
}

describe("cache pressure from the cache model", () => {
  const reqs = schedule([0, 1, 2, 0]);
  const info = { cacheCapacityTokens: 24, hostCacheCapacityTokens: 8 };
  const capacityTokens = modelCapacityOf(info);
  const model = expectCache(reqs, [], { pageSize: PAGE, blockSize: PAGE, capacityTokens, behaviour: UNKNOWN_BEHAVIOUR });
  const records = reqs.map((_, k) => makeRecord({ index: k, ok: true, cachedTokens: 0 }));
  const expectationOf = (r: { index: number }) => model.get(r.index);

  test("the model's capacity is device plus host; group 0's prefix is certainly gone by its second request", () => {
    expect(capacityTokens).toBe(32);
    // 8 pages: groups 1 and 2 touch 5 pages each after group 0's, so its 4 prefix pages are the least recent.
    expect(model.get(3)).toMatchObject({ guaranteed: 0, possible: 0, infiniteGuaranteed: 16 });
  });

  test("eviction is the model's: a report inside the range below an infinite cache's certain hits", () => {
    const p = cachePressure(records, () => 999, 30, { deviceTokens: 24, hostTokens: 8 }, { capacityTokens, expectationOf });
    // 30 tokens fit the model's 32 (device 24 alone would not); request 3 found less than an infinite cache gives,
    // which the model's range explains: eviction.
    expect(p).toEqual({
      working_set_tokens: 30,
      cache_capacity_tokens: 24,
      host_cache_capacity_tokens: 8,
      working_set_fits: true,
      cache_shortfall_requests: 1,
      eviction: true,
    });
  });

  test("a roomy cache: a report below the model's guaranteed is a shortfall, not eviction (the engine dropped it)", () => {
    const roomy = expectCache(reqs, [], { pageSize: PAGE, blockSize: PAGE, capacityTokens: 4096, behaviour: UNKNOWN_BEHAVIOUR });
    expect(roomy.get(3)).toMatchObject({ guaranteed: 16, possible: 16 });
    const reports = reqs.map((_, k) => makeRecord({ index: k, ok: true, cachedTokens: 0 }));
    const p = cachePressure(reports, () => 0, 30, { deviceTokens: 4096, hostTokens: null }, { capacityTokens: 4096, expectationOf: (r) => roomy.get(r.index) });
    expect([p.working_set_fits, p.cache_shortfall_requests, p.eviction]).toEqual([true, 1, false]);
    const fitted = cachePressure(
      reports.slice(0, 3),
      () => 0,
      30,
      { deviceTokens: 4096, hostTokens: null },
      { capacityTokens: 4096, expectationOf: (r) => roomy.get(r.index) },
    );
    expect([fitted.cache_shortfall_requests, fitted.eviction]).toEqual([0, false]);
  });

  test("unknown capacity: the fit is unknown; requests the model does not place are not judged", () => {
    const p = cachePressure(records, () => 999, 30, { deviceTokens: null, hostTokens: null }, { capacityTokens: null, expectationOf: () => undefined });
    expect([p.working_set_fits, p.cache_shortfall_requests, p.eviction]).toEqual([null, null, null]);
  });
});
