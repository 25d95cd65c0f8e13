import { describe, expect, test } from "bun:test";
import { ReplicaRouter, rendezvous } from "../../../src/engine/replica-router.ts";
import type { RoutePolicy } from "../../../src/config/route-policies.ts";

const URLS = ["http://a", "http://b", "http://c"];
const router = (
  policy: RoutePolicy,
  keys = (i: number) => ({ session: i % 4, prefix: (i % 4) as number | null }),
  held: (number | null)[] = [null, null, null],
) => new ReplicaRouter(URLS, policy, keys, { seed: 1n, prefixes: [0, 1, 2, 3], prefixesHeld: held });

describe("ReplicaRouter", () => {
  test("round-robin takes the replicas in turn; every pick is recorded by request index", () => {
    const r = router("round-robin");
    expect([0, 1, 2, 3, 4].map((i) => r.pick(i))).toEqual([0, 1, 2, 0, 1]);
    expect([...r.assigned]).toEqual([
      [0, 0],
      [1, 1],
      [2, 2],
      [3, 0],
      [4, 1],
    ]);
  });

  test("random is the seed's: the same seed picks the same replicas, and every replica gets some", () => {
    const picks = (seed: bigint) => {
      const r = new ReplicaRouter(URLS, "random", () => ({ session: 0, prefix: null }), { seed, prefixes: [], prefixesHeld: [null, null, null] });
      return Array.from({ length: 60 }, (_, i) => r.pick(i));
    };
    expect(picks(7n)).toEqual(picks(7n));
    expect(picks(7n)).not.toEqual(picks(8n));
    expect(new Set(picks(7n)).size).toBe(3);
  });

  test("least-in-flight fills the emptiest replica, and a request that settles frees its place", () => {
    const r = router("least-in-flight");
    expect([0, 1, 2].map((i) => r.pick(i))).toEqual([0, 1, 2]);
    r.done(1);
    expect(r.pick(3)).toBe(1);
  });

  test("session and prefix send a key to one replica always (a consistent hash); prefix without a key goes to the least loaded", () => {
    for (const policy of ["session", "prefix"] as const) {
      const r = router(policy);
      const picks = Array.from({ length: 40 }, (_, i) => r.pick(i));
      for (let i = 0; i < 40; i++) expect(picks[i]).toBe(rendezvous(i % 4, 3));
    }
    const r = router("prefix", () => ({ session: 0, prefix: null }));
    expect([0, 1, 2].map((i) => r.pick(i))).toEqual([0, 1, 2]);
  });

  test("rendezvous hashing moves only the keys a new replica wins", () => {
    let moved = 0;
    for (let key = 0; key < 1000; key++) {
      const before = rendezvous(key, 3);
      const after = rendezvous(key, 4);
      if (after !== before) {
        expect(after).toBe(3);
        moved++;
      }
    }
    // About a quarter of the keys, not a reshuffle.
    expect(moved).toBeGreaterThan(150);
    expect(moved).toBeLessThan(350);
  });

  test("a prefix is warmed where the route first sends it: its hash home, or the spreading policy's pick for its first request", () => {
    expect(router("session").warmsOn(2)).toEqual([rendezvous(2, 3)]);
    expect(router("oracle").warmsOn(2)).toEqual([rendezvous(2, 3)]);
    // Without firstIndexOf, prefix p's first request is request p: round-robin's turn, least-in-flight's emptiest.
    expect(router("round-robin").warmsOn(2)).toEqual([2]);
    expect(router("round-robin").warmsOn(4)).toEqual([1]);
    expect(router("least-in-flight").warmsOn(4)).toEqual([1]);
    // Random: the draw its first request will get.
    const r = router("random");
    const first = Array.from({ length: 5 }, (_, i) => r.pick(i));
    expect(router("random").warmsOn(4)).toEqual([first[4]!]);
    // --warm-replicas all: every replica.
    expect(router("session").warmsOn(2, true)).toEqual([0, 1, 2]);
  });

  test("oracle: where the prefix is held, until that replica is past twice the mean in flight; then it is held there too", () => {
    const r = router("oracle");
    const home = rendezvous(1, 3);
    // Requests of prefix 1, none settling: the home replica takes them while it is within the cap.
    const picks = Array.from({ length: 6 }, (_, i) => r.pick(i * 4 + 1));
    expect(picks.slice(0, 2)).toEqual([home, home]);
    expect(picks.some((p) => p !== home)).toBe(true);
    for (const p of picks) r.done(p);
    // Now held on two replicas: the least loaded holder is chosen.
    const holders = new Set(picks);
    expect(holders.has(r.pick(101))).toBe(true);
  });
});
