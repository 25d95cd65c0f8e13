import { describe, expect, test } from "bun:test";
import { hitLedger, routingImbalance } from "../../../src/metrics/hit-ledger.ts";
import type { BlockPrompt } from "../../../src/metrics/block-prompt.ts";
import type { RequestRecord } from "../../../src/schema/record.ts";
import { makeRecord } from "../../helpers/record.ts";

/** Prompts of 4 pages of 16 tokens: the first `shared` pages of prefix group 0, then pages of their own. */
const PAGE = 16;
const prompt = (index: number, shared: number): BlockPrompt => ({
  index,
  inputLength: 64,
  outputLength: 1,
  hashIds: [0, 1, 2, 3].map((k) => (k < shared ? 1 + k : 1000 + index * 10 + k)),
});
const rec = (index: number, startMs: number, cached: number): RequestRecord =>
  makeRecord({ index, startMs, firstTokenMs: startMs + 1, lastEventMs: startMs + 2, latencyMs: 2, outputLen: 1, cachedTokens: cached, ttftMs: 1 });

describe("hitLedger", () => {
  // Three requests sharing 2 pages, one after another: 0 on replica 0, 1 on replica 1, 2 on replica 0.
  const prompts = [prompt(0, 2), prompt(1, 2), prompt(2, 2)];
  const records = [rec(0, 0, 0), rec(1, 10, 0), rec(2, 20, 32)];
  const replicaOf = (i: number) => [0, 1, 0][i]!;

  test("a request sent where its prefix is not loses it to routing; the terms add up to what was delivered", () => {
    const l = hitLedger({
      prompts,
      records,
      replicaOf,
      replicas: [
        { url: "a", capacityTokens: null, warmed: [] },
        { url: "b", capacityTokens: null, warmed: [] },
      ],
      pageSize: PAGE,
    });
    expect(l.perRequest.get(0)).toEqual({ replica: 0, available: 0, onReplica: 0, modelled: 0, delivered: 0 });
    expect(l.perRequest.get(1)).toEqual({ replica: 1, available: 32, onReplica: 0, modelled: 0, delivered: 0 });
    expect(l.perRequest.get(2)).toEqual({ replica: 0, available: 32, onReplica: 32, modelled: 32, delivered: 32 });
    expect(l.totals).toEqual({ available: 64, onReplica: 32, modelled: 32, delivered: 32 });
    for (const t of [l.totals, ...l.perRequest.values()]) {
      const routing = t.available - t.onReplica,
        eviction = t.onReplica - t.modelled,
        engine = t.modelled - t.delivered;
      expect(t.available - routing - eviction - engine).toBe(t.delivered);
    }
    expect(l.perReplica.map((r) => [r.requests, r.available, r.delivered])).toEqual([
      [2, 32, 32],
      [1, 32, 0],
    ]);
  });

  test("a warm counts as held from the start, on the replica it warmed; a cache too small keeps less than it saw (eviction)", () => {
    const warm = { index: 1e9, inputLength: 32, outputLength: 1, hashIds: [1, 2] };
    const l = hitLedger({
      prompts,
      records,
      replicaOf,
      replicas: [
        { url: "a", capacityTokens: null, warmed: [] },
        { url: "b", capacityTokens: null, warmed: [warm] },
      ],
      pageSize: PAGE,
    });
    expect(l.perRequest.get(0)!.available).toBe(32);
    expect(l.perRequest.get(1)!.onReplica).toBe(32);
    // Replica a holds 2 pages: a request of another prefix (1, sharing nothing) in between pushes the shared pages out.
    const other = { ...prompt(1, 0) };
    const small = hitLedger({
      prompts: [prompts[0]!, other, prompts[2]!],
      records,
      replicaOf: () => 0,
      replicas: [{ url: "a", capacityTokens: 32, warmed: [] }],
      pageSize: PAGE,
    });
    expect(small.perRequest.get(2)).toMatchObject({ available: 32, onReplica: 32, modelled: 0 });
  });

  test("a failed or unreported request is left out of every term, but counts as served", () => {
    const l = hitLedger({
      prompts,
      records: [rec(0, 0, 0), { ...rec(1, 10, -1) }, makeRecord({ ...rec(2, 20, 0), ok: false })],
      replicaOf,
      replicas: [
        { url: "a", capacityTokens: null, warmed: [] },
        { url: "b", capacityTokens: null, warmed: [] },
      ],
      pageSize: PAGE,
    });
    expect(l.counted).toBe(1);
    expect(l.perReplica.map((r) => r.requests)).toEqual([2, 1]);
  });

  test("routing imbalance: the busiest replica over the mean", () => {
    expect(routingImbalance([10, 10, 10])).toBe(1);
    expect(routingImbalance([30, 10, 20])).toBe(1.5);
    expect(routingImbalance([0, 0])).toBeNull();
  });
});
