import { describe, expect, test } from "bun:test";
import { PrefixCache } from "../../../src/mock/prefix-cache.ts";

const range = (start: number, count: number): number[] => Array.from({ length: count }, (_, i) => start + i);

describe("PrefixCache match", () => {
  test("page size 1: exact common prefix, capped at len-1", () => {
    const cache = new PrefixCache(1, 1000);
    cache.insert(range(1, 10));
    expect(cache.cachedTokens).toBe(10);
    expect(cache.match(range(1, 10))).toBe(9); // the whole prompt cached: one token is still computed
    expect(cache.match([...range(1, 10), 77])).toBe(10);
    expect(cache.match([...range(1, 5), 99, 100])).toBe(5);
    expect(cache.match([2, 3, 4])).toBe(0);
    expect(cache.match([1])).toBe(0);
    expect(cache.match([])).toBe(0);
  });

  test("page size 4: whole pages only, rounded down", () => {
    const cache = new PrefixCache(4, 1000);
    cache.insert(range(1, 10)); // 2 full pages; the last 2 tokens are not cached
    expect(cache.cachedTokens).toBe(8);
    expect(cache.match(range(1, 10))).toBe(8);
    expect(cache.match(range(1, 9))).toBe(8); // len-1 = 8 is exactly 2 pages
    expect(cache.match(range(1, 8))).toBe(4); // len-1 = 7 -> 1 page
    expect(cache.match([...range(1, 7), 99, 100])).toBe(4); // diverges inside page 2
    expect(cache.match([1, 2, 3, 99, 5])).toBe(0); // diverges inside page 1
  });

  test("a divergence splits the edge on a page boundary", () => {
    const cache = new PrefixCache(4, 1000);
    cache.insert(range(1, 8));
    cache.insert([...range(1, 4), ...range(50, 4)]);
    expect(cache.cachedTokens).toBe(12);
    expect(cache.nodeCount()).toBe(3);
    expect(cache.match([...range(1, 4), ...range(50, 4), 0])).toBe(8);
    expect(cache.match([...range(1, 8), 0])).toBe(8);
  });

  test("siblings that share a first token but differ later in the first page", () => {
    const cache = new PrefixCache(4, 1000);
    cache.insert([1, 2, 3, 4, 5, 6, 7, 8]);
    cache.insert([1, 2, 3, 4, 5, 6, 9, 9]);
    expect(cache.cachedTokens).toBe(12);
    expect(cache.match([1, 2, 3, 4, 5, 6, 9, 9, 0])).toBe(8);
    expect(cache.match([1, 2, 3, 4, 5, 6, 7, 8, 0])).toBe(8);
    expect(cache.match([1, 2, 3, 4, 5, 6, 0, 0, 0])).toBe(4);
  });

  test("agrees with a brute-force reference on random prompts (pages 1 and 16)", () => {
    for (const pageSize of [1, 16]) {
      let seed = 12345 + pageSize;
      const rand = (n: number): number => {
        seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
        return seed % n;
      };
      const cache = new PrefixCache(pageSize, 1e9);
      const inserted: number[][] = [];
      const reference = (ids: number[]): number => {
        let best = 0;
        for (const prompt of inserted) {
          const full = prompt.length - (prompt.length % pageSize);
          let i = 0;
          while (i < full && i < ids.length - 1 && prompt[i] === ids[i]) i++;
          best = Math.max(best, i - (i % pageSize));
        }
        return best;
      };
      const base = Array.from({ length: 200 }, () => rand(3));
      for (let round = 0; round < 150; round++) {
        // Prompts share a random-length prefix of `base`, then continue with a tiny alphabet.
        const shared = base.slice(0, rand(200));
        const ids = [...shared, ...Array.from({ length: 1 + rand(60) }, () => rand(3))];
        expect(cache.match(ids)).toBe(reference(ids));
        if (rand(3) > 0) {
          cache.insert(ids);
          inserted.push(ids);
        }
      }
    }
  });
});

describe("PrefixCache eviction and clear", () => {
  test("evicts the least recently used leaf when over capacity", () => {
    const cache = new PrefixCache(1, 20);
    const a = range(100, 10);
    const b = range(200, 10);
    const c = range(300, 10);
    cache.insert(a);
    cache.insert(b);
    expect(cache.match([...a, 0])).toBe(10); // refreshes a: b is now the least recent
    cache.insert(c);
    expect(cache.cachedTokens).toBe(20);
    expect(cache.evictedTokens).toBe(10);
    expect(cache.match([...b, 0])).toBe(0);
    expect(cache.match([...a, 0])).toBe(10);
    expect(cache.match([...c, 0])).toBe(10);
  });

  test("trims only the tail pages a leaf must give up", () => {
    const cache = new PrefixCache(2, 16);
    const a = range(100, 10);
    const b = range(200, 10);
    cache.insert(a);
    cache.insert(b); // 20 > 16: 4 tokens (2 pages) leave a's tail
    expect(cache.cachedTokens).toBe(16);
    expect(cache.evictedTokens).toBe(4);
    expect(cache.match([...a, 0])).toBe(6);
    expect(cache.match([...b, 0])).toBe(10);
  });

  test("a shared prefix outlives the leaves hanging from it", () => {
    const cache = new PrefixCache(1, 30);
    const prefix = range(1, 10);
    cache.insert([...prefix, ...range(100, 10)]);
    cache.insert([...prefix, ...range(200, 10)]);
    cache.insert([...prefix, ...range(300, 10)]); // 40 > 30: the oldest suffix goes
    expect(cache.cachedTokens).toBe(30);
    expect(cache.match([...prefix, ...range(100, 10), 0])).toBe(10);
    expect(cache.match([...prefix, ...range(300, 10), 0])).toBe(20);
  });

  test("clear() empties the cache but keeps the eviction count", () => {
    const cache = new PrefixCache(1, 10);
    cache.insert(range(1, 8));
    cache.insert(range(50, 8));
    const evicted = cache.evictedTokens;
    expect(evicted).toBeGreaterThan(0);
    cache.clear();
    expect(cache.cachedTokens).toBe(0);
    expect(cache.nodeCount()).toBe(0);
    expect(cache.match([...range(50, 8), 0])).toBe(0);
    expect(cache.evictedTokens).toBe(evicted);
    cache.insert(range(1, 4));
    expect(cache.match(range(1, 5))).toBe(4);
  });

  test("rejects a page size below 1", () => {
    expect(() => new PrefixCache(0, 10)).toThrow(RangeError);
  });
});

/** Token ids below 150,000 from a seeded linear congruential generator. */
function lcg(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state % 150_000;
  };
}

describe("PrefixCache at benchmark scale", () => {
  test("70,000-token prompts x 64 requests x 3 sweeps stay a few nodes per prompt", () => {
    const cache = new PrefixCache(16, 4_000_000);
    const next = lcg(7);
    const fresh = (n: number): number[] => Array.from({ length: n }, next);
    for (const prefixLen of [35_000, 63_000, 69_300]) {
      cache.clear();
      const prefix = fresh(prefixLen);
      cache.insert(prefix);
      for (let i = 0; i < 64; i++) {
        const ids = [...prefix, ...fresh(70_000 - prefixLen)];
        expect(cache.match(ids)).toBe(prefixLen - (prefixLen % 16));
        cache.insert(ids);
      }
      expect(cache.nodeCount()).toBeLessThanOrEqual(65);
      expect(cache.cachedTokens).toBeLessThanOrEqual(4_000_000);
    }
  });

  test("keeps within capacity while evicting across sweeps", () => {
    const cache = new PrefixCache(1, 1_000_000);
    const next = lcg(11);
    for (let i = 0; i < 40; i++) {
      // A distinct first token keeps prompts disjoint, so every inserted token is held or evicted.
      const ids = Array.from({ length: 70_000 }, next);
      ids[0] = 150_000 + i;
      cache.insert(ids);
      expect(cache.cachedTokens).toBeLessThanOrEqual(1_000_000);
    }
    expect(cache.evictedTokens).toBe(40 * 70_000 - cache.cachedTokens);
  });
});
