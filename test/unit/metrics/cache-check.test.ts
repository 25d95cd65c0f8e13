import { describe, expect, test } from "bun:test";
import { checkCache, type CacheCheckInput } from "../../../src/metrics/cache-check.ts";
import type { RequestRecord } from "../../../src/schema/record.ts";
import { makeRecord } from "../../helpers/record.ts";

const rec = (cachedTokens: number, ok = true): RequestRecord => makeRecord({ ok, cachedTokens });
const input = (over: Partial<CacheCheckInput>): CacheCheckInput => ({
  records: [rec(496), rec(496)],
  expectedCachedTokens: 496,
  promptLen: 1000,
  warmCachedTokens: 0,
  flushProbeCachedTokens: 0,
  mode: "warn",
  tolerance: 0,
  ...over,
});

describe("checkCache", () => {
  test("a healthy cache passes every check", () => {
    const c = checkCache(input({}));
    expect(c.status).toBe("ok");
    expect(c).toMatchObject({ checked: 2, mismatched: 0, flushVerified: true, warmVerified: true, failsStrict: false });
    expect(c.expectedHitRatio).toBe(0.496);
    expect(c.observedHitRatio).toBe(0.496);
    expect(c.cachedTokensCounts).toEqual([[496, 2]]);
    expect(c.problems).toEqual([]);
  });

  test("a lying flush: the warm request finds the prefix already cached", () => {
    const c = checkCache(input({ warmCachedTokens: 496, mode: "strict" }));
    expect(c.flushVerified).toBe(false);
    expect(c.status).toBe("mismatch");
    expect(c.failsStrict).toBe(true);
    expect(c.problems[0]).toMatch(/the flush did not empty the cache: .* found 496 tokens cached/);
  });

  test("a lying flush: the canary cached before the flush is still cached after it", () => {
    const c = checkCache(input({ flushProbeCachedTokens: 64, mode: "strict" }));
    expect(c.flushVerified).toBe(false);
    expect(c.failsStrict).toBe(true);
    expect(c.problems[0]).toMatch(/a probe of a sequence cached before it found 64 tokens cached after it/);
    expect(checkCache(input({ flushProbeCachedTokens: null, warmCachedTokens: null })).flushVerified).toBeNull();
    expect(checkCache(input({ flushProbeCachedTokens: -1, warmCachedTokens: 0 })).flushVerified).toBe(true);
  });

  test("eviction: requests that miss the warmed prefix are counted, failed requests are not", () => {
    const c = checkCache(input({ records: [rec(496), rec(0), rec(16), rec(0, false)], mode: "strict" }));
    expect(c.mismatched).toBe(2);
    expect(c.checked).toBe(3);
    expect(c.problems.join("\n")).toMatch(/2\/3 requests reported cached tokens other than the expected 496 \(saw 0, 16\)/);
    expect(c.failsStrict).toBe(true);
    expect(c.cachedTokensCounts).toEqual([
      [0, 1],
      [16, 1],
      [496, 1],
    ]);
  });

  test("tolerance lets a share of mismatches pass strict mode", () => {
    const records = [rec(496), rec(496), rec(496), rec(0)];
    expect(checkCache(input({ records, mode: "strict", tolerance: 0.25 })).failsStrict).toBe(false);
    expect(checkCache(input({ records, mode: "strict", tolerance: 0.2 })).failsStrict).toBe(true);
  });

  test("a warm that did not take", () => {
    const c = checkCache(input({ records: [rec(0), rec(0)] }));
    expect(c.warmVerified).toBe(false);
    expect(c.status).toBe("mismatch");
    expect(c.failsStrict).toBe(false); // warn mode
    expect(c.problems[0]).toMatch(/the warm did not take/);
    expect(checkCache(input({ records: [rec(0), rec(0)], mode: "strict", tolerance: 1 })).failsStrict).toBe(false);
  });

  test("a server that never reports cached tokens cannot be verified", () => {
    const c = checkCache(input({ records: [rec(-1), rec(-1)], warmCachedTokens: -1, flushProbeCachedTokens: -1, mode: "strict" }));
    expect(c.status).toBe("unreported");
    expect(c.failsStrict).toBe(true);
    expect(c.observedHitRatio).toBeNull();
  });

  test("off reports nothing", () => {
    const c = checkCache(input({ records: [rec(0)], mode: "off" }));
    expect(c.status).toBe("off");
    expect(c.problems).toEqual([]);
    expect(c.failsStrict).toBe(false);
  });

  test("a request no server is known for is no evidence: not checked, and a line of only those is not ok", () => {
    const records = [makeRecord({ index: 0, cachedTokens: 496 }), makeRecord({ index: 1, cachedTokens: 0 })];
    const some = checkCache(input({ records, mode: "strict", expectedRange: (i) => (i === 0 ? [496, 496] : null) }));
    expect([some.status, some.checked, some.mismatched]).toEqual(["ok", 1, 0]);
    expect(some.problems).toEqual(["1 requests could not be judged: no server is known for them (a router that named none)"]);
    const none = checkCache(input({ records, mode: "strict", expectedRange: () => null }));
    expect([none.status, none.checked, none.failsStrict]).toEqual(["unreported", 0, true]);
    // What was observed is still reported, judged or not.
    expect(none.observedHitRatio).toBeCloseTo(248 / 1000);
  });

  test("a range whose low end is 0 proves no warm: only a request that found cached tokens does", () => {
    const pressure = (cached: number) => checkCache(input({ records: [rec(cached), rec(cached)], expectedRange: () => [0, 496] }));
    expect(pressure(0).warmVerified).toBe(false);
    expect(pressure(256).warmVerified).toBe(true);
  });
});
