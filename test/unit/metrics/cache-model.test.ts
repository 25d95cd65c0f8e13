/**
 * The cache model against a server it shares no code with: a page-level LRU cache written here from the rules alone
 * (a page is its position and every token before it; a page goes only when no cached page extends it and no running
 * request holds it; the least recently touched goes first, the deeper of a tie), driven by server-side moments the
 * client never sees (each match somewhere between send and first token, each insertion after it). For every legal
 * behaviour and many random schedules, every request's true cached count must lie in the model's range; where the
 * behaviour is stated and nothing overlaps, the range is exact.
 */
import { describe, expect, test } from "bun:test";
import { UNKNOWN_BEHAVIOUR, type CacheBehaviour } from "../../../src/config/cache-behaviour.ts";
import { expectCache, type CacheSequence, type ModelRequest } from "../../../src/metrics/cache-model.ts";
import { seededUniform as rng } from "../../../src/metrics/seeded-uniform.ts";
import { sequenceOf } from "../../helpers/page-chain.ts";
import { serve, type Scenario, type Served } from "../../helpers/reference-lru.ts";

/** `fcfs`: each request is matched no earlier than every request sent before it (first come, first served). */
function scenario(seed: number, overlap: boolean, wholePrefixes = false, fcfs = false): Scenario {
  const rand = rng(seed);
  const page = 1 + Math.floor(rand() * 4);
  const groups = Array.from({ length: 1 + Math.floor(rand() * 4) }, (_, g) =>
    Array.from({ length: Math.floor(rand() * 6 * page) }, (_, k) => 1000 * (g + 1) + k),
  );
  const requests: Served[] = [];
  let clock = 0;
  let lastMatch = 0;
  const n = 4 + Math.floor(rand() * 20);
  for (let i = 0; i < n; i++) {
    const group = Math.floor(rand() * groups.length);
    const prefix = groups[group]!;
    const keep = !wholePrefixes && rand() < 0.3 ? Math.floor(rand() * prefix.length) : prefix.length;
    const tokens = [...prefix.slice(0, keep), ...Array.from({ length: 1 + Math.floor(rand() * 4 * page) }, (_, k) => 100_000 + i * 100 + k)];
    const output = Array.from({ length: 1 + Math.floor(rand() * 3 * page) }, (_, k) => 500_000 + i * 100 + k);
    clock += overlap ? rand() * 3 : 10;
    const s = clock;
    const m = Math.max(s + rand() * (overlap ? 2 : 1), fcfs ? lastMatch : 0);
    lastMatch = m;
    const p = m + rand();
    const f = p + rand() * 0.5;
    const d = f + rand() * (overlap ? 4 : 1);
    const e = d + rand() * 0.5;
    requests.push({ group, prefixLen: keep, tokens, output, s, m, p, f, d, e });
    if (!overlap) clock = e + 1;
  }
  const prior = groups.filter(() => rand() < 0.5).map((g) => g.slice(0, Math.max(1, g.length)));
  const working = requests.reduce((a, r) => a + Math.ceil((r.tokens.length + r.output.length) / page), 0);
  const capacityPages = rand() < 0.2 ? 10_000 : Math.max(1, Math.floor(working * (0.1 + rand() * 0.9)));
  return { page, capacityPages, prior, requests };
}

/**
 * As a sweep gives them: two segments of many pages (the group's whole prefix, then the request's own tokens, which
 * its answer extends), and a prior (warmed) prefix as its group's one segment.
 */
function segmentsOf(r: Served, i: number, length: number): CacheSequence {
  if (r.prefixLen === 0) return { hashIds: [1_000_000 + i], ends: [length], length };
  return { hashIds: [1 + r.group, 1_000_000 + i], ends: [r.prefixLen, length], length };
}

function modelOf(sc: Scenario, beh: CacheBehaviour, segmented = false) {
  const ids = new Map<string, number>();
  const reqs: ModelRequest[] = sc.requests.map((r, i) => ({
    key: i,
    prompt: segmented ? segmentsOf(r, i, r.tokens.length) : sequenceOf(r.tokens, sc.page, ids),
    startMs: r.s,
    firstTokenMs: r.f,
    endMs: r.e,
    ok: true,
    generated: r.output.length,
    finished: segmented ? segmentsOf(r, i, r.tokens.length + r.output.length - 1) : sequenceOf([...r.tokens, ...r.output.slice(0, -1)], sc.page, ids),
  }));
  const prior = sc.prior.map((t) =>
    segmented ? { hashIds: [1 + Math.floor(t[0]! / 1000) - 1], ends: [t.length], length: t.length } : sequenceOf(t, sc.page, ids),
  );
  return expectCache(reqs, prior, { pageSize: sc.page, blockSize: sc.page, capacityTokens: sc.capacityPages * sc.page, behaviour: beh });
}

const BEHAVIOURS = (["prefill", "finish"] as const).flatMap((insertAt) =>
  [true, false].flatMap((answersCached) => [true, false].map((inflightLocked) => ({ insertAt, answersCached, inflightLocked }))),
);

describe("cache model against an independent LRU server", () => {
  for (const beh of BEHAVIOURS) {
    const name = `insert at ${beh.insertAt}, answers ${beh.answersCached ? "cached" : "not cached"}, in-flight ${beh.inflightLocked ? "locked" : "evictable"}`;
    test(`${name}: every request's truth lies in its range, stated and unknown behaviour`, () => {
      let outside = 0;
      let width = 0;
      let possible = 0;
      for (let seed = 1; seed <= 300; seed++) {
        const sc = scenario(seed * 7919 + BEHAVIOURS.indexOf(beh), true);
        const truth = serve(sc, beh);
        for (const stated of [beh, UNKNOWN_BEHAVIOUR]) {
          const model = modelOf(sc, stated);
          truth.forEach((t, i) => {
            const x = model.get(i)!;
            if (t < x.guaranteed || t > x.possible) {
              outside++;
              if (outside <= 3) console.error(`seed ${seed} req ${i}: truth ${t} outside [${x.guaranteed}, ${x.possible}] (${JSON.stringify(stated)})`);
            }
            if (stated === beh) {
              width += x.possible - x.guaranteed;
              possible += x.possible;
            }
          });
        }
      }
      expect(outside).toBe(0);
      console.log(`${name}: summed width ${width} of summed possible ${possible} (${((100 * width) / Math.max(1, possible)).toFixed(1)} %)`);
    });

    test(`${name}: first come first served, stated (order=fcfs): every truth in its range, the ranges narrower`, () => {
      let outside = 0;
      const width = { fcfs: 0, any: 0 };
      for (let seed = 1; seed <= 300; seed++) {
        const sc = scenario(seed * 7901 + BEHAVIOURS.indexOf(beh), true, seed % 2 === 0, true);
        const truth = serve(sc, beh);
        for (const [which, stated] of [
          ["fcfs", { ...beh, order: "fcfs" }],
          ["any", beh],
        ] as const) {
          const model = modelOf(sc, stated, seed % 2 === 0);
          truth.forEach((t, i) => {
            const x = model.get(i)!;
            width[which] += x.possible - x.guaranteed;
            if (t < x.guaranteed || t > x.possible) {
              outside++;
              if (outside <= 3) console.error(`seed ${seed} req ${i}: truth ${t} outside [${x.guaranteed}, ${x.possible}] (${JSON.stringify(stated)})`);
            }
          });
        }
      }
      expect(outside).toBe(0);
      expect(width.fcfs).toBeLessThan(width.any);
      console.log(`${name}, first come first served: summed width ${width.fcfs} stated, ${width.any} with the order unstated`);
    });

    test(`${name}: prompts as a sweep's segments (a prefix of many pages, then their own): the truth in its range`, () => {
      let outside = 0;
      for (let seed = 1; seed <= 300; seed++) {
        const sc = scenario(seed * 7907 + BEHAVIOURS.indexOf(beh), seed % 3 !== 0, true);
        const truth = serve(sc, beh);
        for (const stated of [beh, UNKNOWN_BEHAVIOUR]) {
          const model = modelOf(sc, stated, true);
          truth.forEach((t, i) => {
            const x = model.get(i)!;
            if (t < x.guaranteed || t > x.possible) {
              outside++;
              if (outside <= 3) console.error(`seed ${seed} req ${i}: truth ${t} outside [${x.guaranteed}, ${x.possible}] (${JSON.stringify(stated)})`);
            }
          });
        }
      }
      expect(outside).toBe(0);
    });

    test(`${name}: requests one at a time get an exact range`, () => {
      for (let seed = 1; seed <= 100; seed++) {
        const sc = scenario(seed * 104_729 + BEHAVIOURS.indexOf(beh), false);
        const truth = serve(sc, beh);
        const model = modelOf(sc, beh);
        truth.forEach((t, i) => {
          const x = model.get(i)!;
          expect([seed, i, x.guaranteed, x.possible]).toEqual([seed, i, t, t]);
        });
      }
    });
  }

  test("an infinite cache: the range is what earlier requests inserted, whatever the capacity says", () => {
    const ids = new Map<string, number>();
    const a = Array.from({ length: 40 }, (_, k) => k + 1);
    const seq = (t: number[]) => sequenceOf(t, 4, ids);
    const reqs: ModelRequest[] = [
      { key: 0, prompt: seq([...a, 900]), startMs: 0, firstTokenMs: 5, endMs: 9, ok: true, generated: 1 },
      { key: 1, prompt: seq([...a, 901]), startMs: 10, firstTokenMs: 15, endMs: 19, ok: true, generated: 1 },
      // Sent before 1's first token: 1's prompt may or may not be there yet.
      { key: 2, prompt: seq([...a.slice(0, 20), 902]), startMs: 12, firstTokenMs: 14, endMs: 16, ok: true, generated: 1 },
    ];
    const m = expectCache(reqs, [], { pageSize: 4, blockSize: 4, capacityTokens: null, behaviour: UNKNOWN_BEHAVIOUR });
    expect(m.get(0)).toEqual({ guaranteed: 0, possible: 0, infiniteGuaranteed: 0, infinitePossible: 0 });
    expect(m.get(1)).toEqual({ guaranteed: 40, possible: 40, infiniteGuaranteed: 40, infinitePossible: 40 });
    expect(m.get(2)).toEqual({ guaranteed: 20, possible: 20, infiniteGuaranteed: 20, infinitePossible: 20 });
  });

  test("a prefix pushed out by a cache full of other pages is certainly gone; one still touched may stay", () => {
    const ids = new Map<string, number>();
    const seq = (t: number[]) => sequenceOf(t, 4, ids);
    const a = Array.from({ length: 16 }, (_, k) => k + 1);
    const other = (base: number) => Array.from({ length: 17 }, (_, k) => base + k);
    const reqs: ModelRequest[] = [
      { key: 0, prompt: seq([...a, 900]), startMs: 0, firstTokenMs: 1, endMs: 2, ok: true, generated: 1 },
      { key: 1, prompt: seq(other(5000)), startMs: 3, firstTokenMs: 4, endMs: 5, ok: true, generated: 1 },
      { key: 2, prompt: seq(other(6000)), startMs: 6, firstTokenMs: 7, endMs: 8, ok: true, generated: 1 },
      { key: 3, prompt: seq([...a, 901]), startMs: 9, firstTokenMs: 10, endMs: 11, ok: true, generated: 1 },
    ];
    // 8 pages: requests 1 and 2 touch 4 pages each after request 0's 4, so a's pages are the least recent and go.
    const m = expectCache(reqs, [], { pageSize: 4, blockSize: 4, capacityTokens: 32, behaviour: UNKNOWN_BEHAVIOUR });
    expect(m.get(3)).toEqual({ guaranteed: 0, possible: 0, infiniteGuaranteed: 16, infinitePossible: 16 });
    const roomy = expectCache(reqs, [], { pageSize: 4, blockSize: 4, capacityTokens: 48, behaviour: UNKNOWN_BEHAVIOUR });
    expect(roomy.get(3)).toEqual({ guaranteed: 16, possible: 16, infiniteGuaranteed: 16, infinitePossible: 16 });
  });
});
