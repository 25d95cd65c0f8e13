/**
 * How sharp any range can be from the client's stamps. A sweep point is run once on the reference LRU server
 * (helpers/reference-lru.ts, no code shared with the model) with mock-like timings; then, keeping every request's send,
 * first token and end as the client saw them, many other server schedules the same stamps allow are drawn (each match
 * between send and first token, in send order: first come, first served; each prefill end between its match and its
 * first token; each finish between its first token and its end) and served again. Every drawn truth must lie in the
 * model's range with the behaviour stated. The spread of the drawn truths is a floor for every sound range: a range
 * that leaves one out fails a correct server. Its share, summed (max - min) over summed max, is the least summed
 * width over summed possible that any model reading these stamps can give; the test prints it beside the model's.
 */
import { describe, expect, test } from "bun:test";
import type { CacheBehaviour } from "../../../src/config/cache-behaviour.ts";
import { expectCache, type ModelRequest } from "../../../src/metrics/cache-model.ts";
import { rng, serve, type Scenario, type Served } from "../../helpers/reference-lru.ts";

const PAGE = 16;
const PROMPT = 256;
const OUTPUT = 4;
const REQUESTS = 32;
const CONCURRENCY = 4;
/** Schedules drawn per point: the floor only grows with more (a lower bound either way). */
const DRAWS = 150;
/** The truth test's working set: pct 90 over 16 prefixes, 230 tokens each. */
const WORKING_SET_TOKENS = 16 * 230;

interface Point {
  pct: number;
  workingSet: number;
  /** Cache capacity as a share of the largest working set (16 prefixes of 230 tokens), as the truth test's mock has it. */
  share: number;
}

/** A sweep point served once with the mock's timings (1 ms per generated token, a prefill of about a millisecond). */
function servedOnce(pt: Point, seed: number): Scenario {
  const rand = rng(seed);
  const prefixLen = Math.floor((PROMPT * pt.pct) / 100);
  const groups = Array.from({ length: pt.workingSet }, (_, g) => Array.from({ length: prefixLen }, (_, k) => 1000 * (g + 1) + k));
  const slotFree = Array.from({ length: CONCURRENCY }, () => 0);
  const requests: Served[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const slot = slotFree.indexOf(Math.min(...slotFree));
    const group = i % pt.workingSet;
    const tokens = [...groups[group]!, ...Array.from({ length: PROMPT - prefixLen }, (_, k) => 100_000 + i * 1000 + k)];
    const output = Array.from({ length: OUTPUT }, (_, k) => 500_000 + i * 1000 + k);
    const s = Math.max(slotFree[slot]!, requests.at(-1)?.s ?? 0) + rand() * 0.2;
    const m = Math.max(s + 0.1 + rand() * 0.3, requests.at(-1)?.m ?? 0);
    const p = m + 0.8 + rand() * 0.6;
    const f = p + 0.05 + rand() * 0.2;
    const d = f + (OUTPUT - 1) * (0.9 + rand() * 0.2);
    const e = d + 0.05 + rand() * 0.2;
    slotFree[slot] = e;
    requests.push({ group, prefixLen, tokens, output, s, m, p, f, d, e });
  }
  const capacityPages = Math.floor((pt.share * WORKING_SET_TOKENS) / PAGE);
  return { page: PAGE, capacityPages, prior: prefixLen === 0 ? [] : groups, requests };
}

/**
 * Another schedule the same client stamps allow, first come first served: a request is matched after every request
 * sent before it, so no later than any later request's first token.
 */
function redrawn(sc: Scenario, rand: () => number): Scenario {
  const latest = sc.requests.map((r) => r.f);
  for (let i = latest.length - 2; i >= 0; i--) latest[i] = Math.min(latest[i]!, latest[i + 1]!);
  let lastMatch = 0;
  const requests = sc.requests.map((r, i) => {
    const earliest = Math.max(r.s, lastMatch);
    const m = earliest + rand() * (latest[i]! - earliest);
    lastMatch = m;
    const p = m + rand() * (r.f - m);
    const d = r.f + rand() * (r.e - r.f);
    return { ...r, m, p, d };
  });
  return { ...sc, requests };
}

function modelOf(sc: Scenario, behaviour: CacheBehaviour) {
  const reqs: ModelRequest[] = sc.requests.map((r, i) => ({
    key: i,
    prompt:
      r.prefixLen === 0
        ? { hashIds: [1_000_000 + i], ends: [r.tokens.length], length: r.tokens.length }
        : { hashIds: [1 + r.group, 1_000_000 + i], ends: [r.prefixLen, r.tokens.length], length: r.tokens.length },
    startMs: r.s,
    firstTokenMs: r.f,
    endMs: r.e,
    ok: true,
    generated: r.output.length,
  }));
  const prior = sc.prior.map((t, g) => ({ hashIds: [1 + g], ends: [t.length], length: t.length }));
  return expectCache(reqs, prior, { pageSize: sc.page, blockSize: sc.page, capacityTokens: sc.capacityPages * sc.page, behaviour });
}

const BEHAVIOURS = (["prefill", "finish"] as const).flatMap((insertAt) =>
  [true, false].flatMap((answersCached) => [true, false].map((inflightLocked) => ({ insertAt, answersCached, inflightLocked }))),
);
const nameOf = (b: (typeof BEHAVIOURS)[number]) =>
  `insert=${b.insertAt},answers=${b.answersCached ? "cached" : "uncached"},inflight=${b.inflightLocked ? "locked" : "evictable"}`;
const pctOf = (w: number, p: number) => `${p > 0 ? ((100 * w) / p).toFixed(1) : "0.0"} %`;

describe("the least width any range can have, from the client's stamps (sweep points, 32 requests at concurrency 4)", () => {
  for (const share of [0.25, 1, 2]) {
    test(`cache ${share}x the working set: every drawn schedule's truth in the model's range; the floor and the model's width`, () => {
      const rows: string[] = [];
      const sums = { floor: 0, floorMax: 0, width: 0, possible: 0 };
      let outside = 0;
      for (const b of BEHAVIOURS) {
        const each = { floor: 0, floorMax: 0, width: 0, possible: 0 };
        for (const pct of [50, 90]) {
          for (const workingSet of [1, 4, 16]) {
            const pt = { pct, workingSet, share };
            const once = servedOnce(pt, 7 + pct * 31 + workingSet * 977 + BEHAVIOURS.indexOf(b));
            const model = modelOf(once, { ...b, order: "fcfs" });
            const rand = rng(pct * 13 + workingSet);
            const lo = serve(once, b);
            const hi = [...lo];
            for (let k = 0; k < DRAWS; k++) {
              const truth = serve(redrawn(once, rand), b);
              truth.forEach((t, i) => {
                const x = model.get(i)!;
                if (t < x.guaranteed || t > x.possible) {
                  outside++;
                  if (outside <= 3) console.error(`${nameOf(b)} pct ${pct} ws ${workingSet}: req ${i} truth ${t} outside [${x.guaranteed}, ${x.possible}]`);
                }
                lo[i] = Math.min(lo[i]!, t);
                hi[i] = Math.max(hi[i]!, t);
              });
            }
            for (let i = 0; i < lo.length; i++) {
              const x = model.get(i)!;
              each.floor += hi[i]! - lo[i]!;
              each.floorMax += hi[i]!;
              each.width += x.possible - x.guaranteed;
              each.possible += x.possible;
            }
          }
        }
        for (const k of Object.keys(sums) as (keyof typeof sums)[]) sums[k] += each[k];
        rows.push(`  ${nameOf(b)}: floor ${pctOf(each.floor, each.floorMax)}, model ${pctOf(each.width, each.possible)}`);
      }
      expect(outside).toBe(0);
      // The floor is what the drawn schedules reached; a sound range contains them all, so it is never wider than the model's.
      expect(sums.floor).toBeLessThanOrEqual(sums.width);
      // Under pressure the floor itself is above issue 35's 10 % target (docs/guides/cache-model.md says so): no sound
      // range reading these stamps can meet it. A change to the scenario that loses this must change the guide too.
      if (share < 2) expect((100 * sums.floor) / sums.floorMax).toBeGreaterThan(10);
      console.log(
        `cache ${share}x, stated behaviour, order=fcfs: floor ${pctOf(sums.floor, sums.floorMax)}, model ${pctOf(sums.width, sums.possible)}\n${rows.join("\n")}`,
      );
    }, 60_000);
  }
});
