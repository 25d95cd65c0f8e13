/** The mock's llama.cpp slots: per-slot prefix reuse, pinning, slot choice, erase, and the host-RAM cache. */
import { describe, expect, test } from "bun:test";
import { SlotCache } from "../../../src/mock/slot-cache.ts";

const range = (from: number, n: number): number[] => Array.from({ length: n }, (_, i) => from + i);
const P = range(1000, 100);
const withSuffix = (seed: number): number[] => [...P, ...range(5000 + seed * 100, 20)];

/** Runs one request to the end on the cache; returns its cached tokens and the slot it took. */
function run(cache: SlotCache, ids: number[], idSlot: number | null = null, generated = 1): number {
  const claim = cache.claim({ inputIds: ids, idSlot, cachePrompt: true });
  if (claim === null) throw new Error("no slot");
  const cached = claim.match().tokens;
  claim.insert();
  claim.release(generated);
  return cached;
}

describe("SlotCache", () => {
  test("the cache is per slot: a prefix pinned to slot 0 is not on slot 1", () => {
    const cache = new SlotCache(2, false);
    expect(run(cache, P, 0)).toBe(0);
    expect(run(cache, withSuffix(1), 1)).toBe(0);
    expect(run(cache, withSuffix(2), 0)).toBe(100);
  });

  test("an identical prompt reuses n - 1; cache_prompt false reuses nothing but keeps the slot", () => {
    const cache = new SlotCache(1, false);
    run(cache, withSuffix(1));
    expect(run(cache, withSuffix(1))).toBe(119);
    const claim = cache.claim({ inputIds: withSuffix(1), idSlot: null, cachePrompt: false })!;
    expect(claim.match().tokens).toBe(0);
    claim.insert();
    claim.release(1);
    expect(run(cache, withSuffix(2))).toBe(100);
  });

  test("unpinned requests go to the most similar idle slot (over 10%), else the least recently used", () => {
    const cache = new SlotCache(3, false);
    for (let slot = 0; slot < 3; slot++) run(cache, slot === 1 ? P : range(9000 + slot * 500, 50), slot);
    // Only slot 1 holds P: a P-prompt lands there whatever the LRU order.
    expect(run(cache, withSuffix(1))).toBe(100);
    // A prompt sharing nothing takes the least recently used slot (0), which it then holds.
    expect(run(cache, range(20000, 30))).toBe(0);
    expect(run(cache, range(20000, 30), 0)).toBe(29);
  });

  test("warming every slot makes concurrent requests hit on every slot; one warm covers one slot", () => {
    const warmed = new SlotCache(4, false);
    for (let slot = 0; slot < 4; slot++) run(warmed, P, slot);
    const claims = [1, 2, 3, 4].map((seed) => warmed.claim({ inputIds: withSuffix(seed), idSlot: null, cachePrompt: true })!);
    expect(claims.map((c) => c.match().tokens)).toEqual([100, 100, 100, 100]);
    expect(warmed.claim({ inputIds: P, idSlot: null, cachePrompt: true })).toBeNull(); // all 4 busy

    const once = new SlotCache(4, false);
    run(once, P, 0);
    const hits = [1, 2, 3, 4].map((seed) => once.claim({ inputIds: withSuffix(seed), idSlot: null, cachePrompt: true })!.match().tokens);
    expect(hits.sort()).toEqual([0, 0, 0, 100]);
  });

  test("a pinned request waits for its busy slot; ids wrap modulo the slot count", () => {
    const cache = new SlotCache(2, false);
    const busy = cache.claim({ inputIds: P, idSlot: 1, cachePrompt: true })!;
    expect(cache.claim({ inputIds: P, idSlot: 3, cachePrompt: true })).toBeNull();
    expect(cache.claim({ inputIds: P, idSlot: 0, cachePrompt: true })).not.toBeNull();
    busy.release(1);
  });

  test("erase empties a slot (prompt + generated - 1 tokens), after a busy one finishes", async () => {
    const cache = new SlotCache(1, false);
    const claim = cache.claim({ inputIds: withSuffix(1), idSlot: null, cachePrompt: true })!;
    claim.insert();
    let erased = -1;
    const pending = cache.erase(0).then((n) => (erased = n));
    await Bun.sleep(5);
    expect(erased).toBe(-1);
    claim.release(3);
    await pending;
    expect(erased).toBe(122);
    expect(run(cache, withSuffix(2))).toBe(0);
  });

  test("host-RAM cache: a displaced prompt survives an erase and comes back into an LRU slot", () => {
    const cache = new SlotCache(1, true);
    run(cache, withSuffix(1));
    run(cache, range(30000, 80)); // takes the slot by LRU: withSuffix(1) goes to RAM
    void cache.erase(0);
    expect(run(cache, withSuffix(2))).toBe(100);
  });

  test("host-RAM cache: an erase right after a request clears it (the copy is made only when the slot is taken)", () => {
    const cache = new SlotCache(1, true);
    run(cache, withSuffix(1));
    void cache.erase(0);
    expect(run(cache, withSuffix(2))).toBe(0);
  });

  test("host-RAM cache: a pinned request on an empty slot loads nothing (llama.cpp's 0/0 keep ratio)", () => {
    const cache = new SlotCache(1, true);
    run(cache, withSuffix(1), 0);
    run(cache, range(30000, 80), 0);
    void cache.erase(0);
    expect(run(cache, withSuffix(2), 0)).toBe(0);
  });
});
