/** The mock's device + host cache tiers: evicted device pages move to the host, hits come back from there. */
import { describe, expect, test } from "bun:test";
import { PrefixCache } from "../../../src/mock/prefix-cache.ts";
import { TieredCache } from "../../../src/mock/tiered-cache.ts";

const seq = (n: number, start: number): number[] => Array.from({ length: n }, (_, i) => start + i);

describe("PrefixCache eviction sink", () => {
  test("receives the whole path of each evicted leaf, before its pages go", () => {
    const seen: number[][] = [];
    const cache = new PrefixCache(1, 150, (ids) => seen.push(Array.from(ids)));
    const shared = seq(50, 1);
    cache.insert([...shared, ...seq(50, 100)]);
    cache.insert([...shared, ...seq(50, 200)]);
    cache.insert(seq(60, 300));
    // 210 > 150: the least recent leaf (the first branch's 50 own tokens) goes, then 10 more.
    expect(seen[0]).toEqual([...shared, ...seq(50, 100)]);
    expect(cache.cachedTokens).toBeLessThanOrEqual(150);
    expect(cache.evictedTokens).toBe(60);
  });
});

describe("TieredCache", () => {
  test("without a host tier an evicted prefix is simply gone", () => {
    const cache = new TieredCache(4, 100, 0);
    cache.insert(seq(80, 1));
    cache.insert(seq(80, 1000));
    const hit = cache.match([...seq(80, 1), 7]);
    expect(hit.hostTokens).toBe(0);
    expect(hit.tokens).toBe(hit.deviceTokens);
    expect(hit.tokens).toBeLessThan(80);
    expect(cache.hostCachedTokens).toBe(0);
  });

  test("with a host tier the evicted pages are served from the host, and the device keeps what it still has", () => {
    const cache = new TieredCache(4, 100, 1000);
    cache.insert(seq(80, 1));
    cache.insert(seq(80, 1000)); // evicts 60 of the first sequence's 80 tokens from the device
    expect(cache.hostCachedTokens).toBe(80);
    const hit = cache.match([...seq(80, 1), 7]);
    expect(hit).toEqual({ tokens: 80, deviceTokens: 20, hostTokens: 60 });
    expect(cache.evictedTokens).toBe(60);
  });

  test("a prefix wholly on the device is a device hit; a flush empties both tiers", () => {
    const cache = new TieredCache(1, 1000, 1000);
    cache.insert(seq(50, 1));
    expect(cache.match([...seq(50, 1), 9])).toEqual({ tokens: 50, deviceTokens: 50, hostTokens: 0 });
    cache.insert(seq(2000, 5000));
    expect(cache.hostCachedTokens).toBeGreaterThan(0);
    cache.clear();
    expect(cache.cachedTokens).toBe(0);
    expect(cache.hostCachedTokens).toBe(0);
    expect(cache.match([...seq(50, 1), 9]).tokens).toBe(0);
  });

  test("the host tier is an LRU of its own capacity", () => {
    const cache = new TieredCache(1, 10, 100);
    for (let k = 0; k < 5; k++) cache.insert(seq(40, 1000 * (k + 1)));
    expect(cache.hostCachedTokens).toBeLessThanOrEqual(100);
    // The oldest sequence fell out of both tiers; the latest evicted ones are on the host.
    expect(cache.match([...seq(40, 1000), 1]).tokens).toBe(0);
    expect(cache.match([...seq(40, 4000), 1]).hostTokens).toBeGreaterThan(0);
  });
});
