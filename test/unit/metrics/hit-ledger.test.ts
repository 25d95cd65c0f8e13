import { describe, expect, test } from "bun:test";
import { UNKNOWN_BEHAVIOUR } from "../../../src/config/cache-behaviour.ts";
import type { CacheSequence } from "../../../src/metrics/cache-model.ts";
import { hitLedger, routingImbalance, type LedgerInput } from "../../../src/metrics/hit-ledger.ts";
import type { RequestRecord } from "../../../src/schema/record.ts";
import { makeRecord } from "../../helpers/record.ts";

/** Prompts of 4 pages of 16 tokens: the first `shared` pages of prefix group 0, then pages of their own. */
const PAGE = 16;
const prompt = (index: number, shared: number): CacheSequence => ({
  hashIds: [0, 1, 2, 3].map((k) => (k < shared ? 1 + k : 1000 + index * 10 + k)),
  length: 64,
});
const rec = (index: number, startMs: number, cached: number): RequestRecord =>
  makeRecord({ index, startMs, firstTokenMs: startMs + 1, lastEventMs: startMs + 2, latencyMs: 2, outputLen: 1, cachedTokens: cached, ttftMs: 1 });

const two = [
  { url: "a", capacityTokens: null, warmed: [] },
  { url: "b", capacityTokens: null, warmed: [] },
];

describe("hitLedger", () => {
  // Three requests sharing 2 pages, one after another: 0 on replica 0, 1 on replica 1, 2 on replica 0.
  const prompts = [prompt(0, 2), prompt(1, 2), prompt(2, 2)];
  const base: LedgerInput = {
    sequenceOf: (i) => prompts[i],
    records: [rec(0, 0, 0), rec(1, 10, 0), rec(2, 20, 32)],
    replicaOf: (i) => [0, 1, 0][i]!,
    homeKeyOf: () => 0,
    replicas: two,
    pageSize: PAGE,
    behaviour: UNKNOWN_BEHAVIOUR,
  };

  test("a request sent away from its prefix's home loses it to routing; the terms add up to what was delivered", () => {
    const l = hitLedger(base);
    expect(l.perRequest.get(0)).toMatchObject({ replica: 0, available: 0, home: 0, guaranteed: 0, possible: 0, delivered: 0, routing: 0 });
    // At home (replica 0, where the prefix's first request went) it would have found the prefix; on replica 1 it could not.
    expect(l.perRequest.get(1)).toMatchObject({
      replica: 1,
      available: 32,
      home: 32,
      guaranteed: 0,
      possible: 0,
      delivered: 0,
      routing: 32,
      eviction: 0,
      engine: 0,
    });
    expect(l.perRequest.get(2)).toMatchObject({ replica: 0, available: 32, home: 32, guaranteed: 32, delivered: 32, routing: 0, engine: 0 });
    expect(l.totals).toMatchObject({ available: 64, home: 64, guaranteed: 32, delivered: 32, routing: 32, eviction: 0, engine: 0, unexplained: 0 });
    for (const t of [l.totals, ...l.perRequest.values()]) {
      // available - routing - eviction = what the model guarantees; the engine's loss is below that.
      expect(t.available - t.routing - t.eviction).toBe(t.guaranteed);
    }
    expect(l.perReplica.map((r) => [r.requests, r.available, r.delivered])).toEqual([
      [2, 32, 32],
      [1, 32, 0],
    ]);
  });

  test("every request at its prefix's home: no routing loss", () => {
    const l = hitLedger({ ...base, replicaOf: () => 1 });
    expect(l.totals).toMatchObject({ available: 64, home: 64, guaranteed: 64, routing: 0, eviction: 0 });
  });

  test("a warm counts as held from the start, on the replica it warmed", () => {
    const warm = { hashIds: [1, 2], length: 32 };
    const l = hitLedger({ ...base, replicas: [two[0]!, { ...two[1]!, warmed: [warm] }] });
    expect(l.perRequest.get(0)!.available).toBe(32);
    expect(l.perRequest.get(1)).toMatchObject({ onReplica: 32, guaranteed: 32 });
  });

  test("a cache too small for what came between loses the prefix to eviction, at home too", () => {
    // Replica a holds 4 pages: request 1 (4 pages of its own) in between pushes the shared pages out.
    const other = [prompt(0, 2), prompt(1, 0), prompt(2, 2)];
    const small = hitLedger({
      ...base,
      sequenceOf: (i) => other[i],
      records: [rec(0, 0, 0), rec(1, 10, 0), rec(2, 20, 0)],
      replicaOf: () => 0,
      homeKeyOf: (i) => (i === 1 ? null : 0),
      replicas: [{ url: "a", capacityTokens: 64, warmed: [] }],
    });
    expect(small.perRequest.get(2)).toMatchObject({ available: 32, home: 0, onReplica: 32, guaranteed: 0, possible: 0, eviction: 32, routing: 0, engine: 0 });
  });

  test("hits the server must have had and did not report are the engine's; hits beyond the possible are unexplained", () => {
    const l = hitLedger({ ...base, records: [rec(0, 0, 16), rec(1, 10, 0), rec(2, 20, 0)] });
    expect(l.perRequest.get(2)).toMatchObject({ guaranteed: 32, delivered: 0, engine: 32 });
    expect(l.perRequest.get(0)).toMatchObject({ possible: 0, delivered: 16, unexplained: 16 });
    expect(l.totals).toMatchObject({ engine: 32, unexplained: 16 });
  });

  test("a failed or unreported request is left out of every term, but counts as served", () => {
    const l = hitLedger({ ...base, records: [rec(0, 0, 0), { ...rec(1, 10, -1) }, makeRecord({ ...rec(2, 20, 0), ok: false })] });
    expect(l.counted).toBe(1);
    expect(l.perReplica.map((r) => r.requests)).toEqual([2, 1]);
  });

  test("routing imbalance: the busiest replica over the mean", () => {
    expect(routingImbalance([10, 10, 10])).toBe(1);
    expect(routingImbalance([30, 10, 20])).toBe(1.5);
    expect(routingImbalance([0, 0])).toBeNull();
  });
});
