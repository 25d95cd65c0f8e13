/** Locks on the mock's radix cache (--inflight-pages locked): held pages are never evicted, and eviction resumes on unlock. */
import { describe, expect, test } from "bun:test";
import { PrefixCache } from "../../../src/mock/prefix-cache.ts";
import { TieredCache } from "../../../src/mock/tiered-cache.ts";

const range = (start: number, count: number): number[] => Array.from({ length: count }, (_, i) => start + i);

describe("PrefixCache locks", () => {
  test("a locked leaf is spared: the least recently used unlocked leaf goes instead", () => {
    const cache = new PrefixCache(1, 20);
    const a = range(100, 10);
    const b = range(200, 10);
    const lockA = cache.insertLocked(a); // a is the oldest, and held
    cache.insert(b);
    cache.insert(range(300, 10)); // 30 > 20
    expect(cache.cachedTokens).toBe(20);
    expect(cache.match([...a, 0])).toBe(10);
    expect(cache.match([...b, 0])).toBe(0);
    expect(lockA.tokens).toBe(10);
    expect(cache.lockedTokens()).toBe(10);
  });

  test("without the lock the same inserts evict the oldest leaf (a)", () => {
    const cache = new PrefixCache(1, 20);
    const a = range(100, 10);
    const b = range(200, 10);
    cache.insert(a);
    cache.insert(b);
    cache.insert(range(300, 10));
    expect(cache.match([...a, 0])).toBe(0);
    expect(cache.match([...b, 0])).toBe(10);
  });

  test("everything locked: the cache stays over capacity, and evicts down once a lock drops", () => {
    const cache = new PrefixCache(1, 20);
    const a = cache.insertLocked(range(100, 15));
    const b = cache.insertLocked(range(200, 15));
    expect(cache.cachedTokens).toBe(30); // recorded as-is, over the 20 it may hold
    expect(cache.evictedTokens).toBe(0);
    cache.unlock(a);
    expect(cache.cachedTokens).toBe(20);
    expect(cache.evictedTokens).toBe(10);
    expect(cache.match([...range(100, 15), 0])).toBe(5); // a lost its tail pages, b none
    expect(cache.match([...range(200, 15), 0])).toBe(15);
    cache.unlock(a); // a second unlock does nothing
    cache.unlock(b);
    expect(cache.lockedTokens()).toBe(0);
    expect(cache.cachedTokens).toBe(20);
  });

  test("an insert over capacity keeps its own locked pages and evicts the others", () => {
    const cache = new PrefixCache(1, 20);
    cache.insert(range(100, 15));
    const held = cache.insertLocked(range(200, 15));
    expect(cache.cachedTokens).toBe(20);
    expect(cache.match([...range(200, 15), 0])).toBe(15);
    expect(cache.match([...range(100, 15), 0])).toBe(5);
    cache.unlock(held);
  });

  test("a locked path's ancestors are held: an unlocked sibling branch goes, the shared prefix stays", () => {
    const cache = new PrefixCache(1, 25);
    const prefix = range(1, 10);
    const held = cache.insertLocked([...prefix, ...range(100, 10)]);
    cache.insert([...prefix, ...range(200, 10)]);
    cache.insert(range(300, 10)); // 40 > 25: 15 must go, none of them held
    expect(cache.cachedTokens).toBe(25);
    expect(cache.match([...prefix, ...range(100, 10), 0])).toBe(20);
    expect(cache.match([...prefix, ...range(200, 10), 0])).toBe(10);
    cache.unlock(held);
  });

  test("a locked edge split by a later insert stays held in both halves", () => {
    const cache = new PrefixCache(2, 20);
    const a = range(100, 12);
    const held = cache.insertLocked(a);
    cache.insert([...a.slice(0, 4), ...range(500, 8)]); // splits a's edge after 2 pages: 20 tokens
    cache.insert(range(900, 8)); // 28 > 20: only the unlocked leaves can give pages
    expect(cache.match([...a, 0])).toBe(12);
    expect(cache.lockedTokens()).toBe(12);
    cache.unlock(held);
    expect(cache.lockedTokens()).toBe(0);
  });

  test("matchLocked holds exactly the matched pages: a partly matched edge is split there", () => {
    const cache = new PrefixCache(4, 16);
    cache.insert(range(1, 16));
    const { tokens, lock } = cache.matchLocked([...range(1, 8), 99, 99, 99, 99]);
    expect(tokens).toBe(8);
    expect(lock.tokens).toBe(8);
    expect(cache.nodeCount()).toBe(2);
    const other = cache.insertLocked(range(100, 12)); // 28 > 16: only the unmatched 8 tokens of the first prompt are free
    expect(cache.cachedTokens).toBe(20);
    expect(cache.match([...range(1, 16), 0])).toBe(8);
    expect(cache.match([...range(100, 12), 0])).toBe(12);
    cache.unlock(lock); // the matched pages may go now: one of their pages does
    expect(cache.cachedTokens).toBe(16);
    expect(cache.match([...range(1, 16), 0])).toBe(4);
    cache.unlock(other);
  });

  test("clear() drops every lock: a later unlock holds nothing and changes nothing", () => {
    const cache = new PrefixCache(1, 10);
    const held = cache.insertLocked(range(1, 10));
    cache.clear();
    expect(cache.lockedTokens()).toBe(0);
    cache.insert(range(50, 10));
    cache.unlock(held);
    expect(cache.cachedTokens).toBe(10);
    expect(cache.match([...range(50, 10), 0])).toBe(10);
  });

  test("70,000-token prompts, locked while they run, stay a few nodes", () => {
    const cache = new PrefixCache(16, 4_000_000);
    let seed = 3;
    const next = (): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % 150_000;
    };
    const fresh = (n: number): number[] => Array.from({ length: n }, next);
    const prefix = fresh(63_000);
    cache.insert(prefix);
    for (let i = 0; i < 32; i++) {
      const ids = [...prefix, ...fresh(7_000)];
      const matched = cache.matchLocked(ids);
      expect(matched.tokens).toBe(63_000 - (63_000 % 16));
      const inserted = cache.insertLocked(ids);
      cache.unlock(matched.lock);
      cache.unlock(inserted);
    }
    expect(cache.nodeCount()).toBeLessThanOrEqual(34);
    expect(cache.lockedTokens()).toBe(0);
  });
});

describe("TieredCache locks", () => {
  test("held device pages do not move to the host; an unlocked one does when pressure comes", () => {
    const cache = new TieredCache(1, 20, 1000);
    const held = cache.insertLocked(range(100, 10));
    cache.insert(range(200, 10));
    cache.insert(range(300, 10));
    expect(cache.match([...range(100, 10), 0])).toEqual({ tokens: 10, deviceTokens: 10, hostTokens: 0 });
    expect(cache.match([...range(200, 10), 0])).toEqual({ tokens: 10, deviceTokens: 0, hostTokens: 10 });
    const { hit, lock } = cache.matchLocked([...range(300, 10), 0]);
    expect(hit).toEqual({ tokens: 10, deviceTokens: 10, hostTokens: 0 });
    cache.unlock(lock);
    cache.unlock(held);
  });
});
