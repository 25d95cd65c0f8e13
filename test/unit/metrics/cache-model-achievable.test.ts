/**
 * How sharp any range can be from the client's stamps. A workload (sweep points; conversations) is run once on the
 * reference LRU server (helpers/reference-lru.ts, no code shared with the model) with mock-like timings; then, keeping
 * every request's send, first token and end as the client saw them, many other server schedules the same stamps allow
 * are drawn (each match between send and first token, in send order: first come, first served; each prefill end
 * between its match and its first token; each finish between its first token and its end) and served again. Every
 * drawn truth must lie in the model's range with the behaviour stated. The spread of the drawn truths is a floor for
 * every sound range: a range that leaves one out fails a correct server. Its share, summed (max - min) over summed
 * max, is the least summed width over summed possible that any model reading these stamps can give; the test prints
 * it beside the model's.
 */
import { describe, expect, test } from "bun:test";
import type { CacheBehaviour } from "../../../src/config/cache-behaviour.ts";
import { expectCache, type ModelRequest } from "../../../src/metrics/cache-model.ts";
import { seededUniform as rng } from "../../../src/metrics/seeded-uniform.ts";
import { sequenceOf } from "../../helpers/page-chain.ts";
import { serve, type Scenario, type Served } from "../../helpers/reference-lru.ts";

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

/** The sweep as the engine reads it: a prompt is its group's prefix, then its own tokens. */
function sweepModelOf(sc: Scenario, behaviour: CacheBehaviour) {
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

/**
 * Conversations as multi-turn sends them (4 of 4 turns, a 32-token system prompt warmed, 48 tokens a turn, 8 generated,
 * every conversation in flight at once, each turn sent when its previous answer ended), served once with mock-like
 * timings; the requests in send order.
 */
function conversationsOnce(cacheTokens: number, seed: number): Scenario {
  const rand = rng(seed);
  const system = Array.from({ length: 32 }, (_, k) => 900_000 + k);
  const history = [0, 1, 2, 3].map(() => [...system]);
  const nextSend = history.map(() => rand() * 0.5);
  const turns = history.map(() => 0);
  const requests: Served[] = [];
  for (;;) {
    const c = nextSend.indexOf(Math.min(...nextSend));
    if (!Number.isFinite(nextSend[c]!)) break;
    const k = turns[c]!++;
    const tokens = [...history[c]!, ...Array.from({ length: 48 }, (_, j) => 100_000 + c * 10_000 + k * 100 + j)];
    const output = Array.from({ length: 8 }, (_, j) => 500_000 + c * 10_000 + k * 100 + j);
    const s = nextSend[c]!;
    const m = Math.max(s + 0.1 + rand() * 0.3, requests.at(-1)?.m ?? 0);
    const p = m + 0.8 + rand() * 0.6;
    const f = p + 0.05 + rand() * 0.2;
    const d = f + 7 * (0.9 + rand() * 0.2);
    const e = d + 0.05 + rand() * 0.2;
    requests.push({ group: 0, prefixLen: 0, tokens, output, s, m, p, f, d, e });
    history[c] = [...tokens, ...output];
    nextSend[c] = k + 1 < 4 ? e + rand() * 0.3 : Infinity;
  }
  return { page: PAGE, capacityPages: Math.floor(cacheTokens / PAGE), prior: [system], requests };
}

/** Conversations as the engine reads them: pages by content, and what each turn's end caches (its prompt and answer but the last token). */
function conversationModelOf(sc: Scenario, behaviour: CacheBehaviour) {
  const ids = new Map<string, number>();
  const reqs: ModelRequest[] = sc.requests.map((r, i) => ({
    key: i,
    prompt: sequenceOf(r.tokens, PAGE, ids),
    finished: sequenceOf([...r.tokens, ...r.output.slice(0, -1)], PAGE, ids),
    startMs: r.s,
    firstTokenMs: r.f,
    endMs: r.e,
    ok: true,
    generated: r.output.length,
  }));
  const prior = sc.prior.map((t) => sequenceOf(t, PAGE, ids));
  return expectCache(reqs, prior, { pageSize: PAGE, blockSize: PAGE, capacityTokens: sc.capacityPages * PAGE, behaviour });
}

const BEHAVIOURS = (["prefill", "finish"] as const).flatMap((insertAt) =>
  [true, false].flatMap((answersCached) => [true, false].map((inflightLocked) => ({ insertAt, answersCached, inflightLocked }))),
);
const nameOf = (b: (typeof BEHAVIOURS)[number]) =>
  `insert=${b.insertAt},answers=${b.answersCached ? "cached" : "uncached"},inflight=${b.inflightLocked ? "locked" : "evictable"}`;
const pctOf = (w: number, p: number) => `${p > 0 ? ((100 * w) / p).toFixed(1) : "0.0"} %`;

interface Sums {
  floor: number;
  floorMax: number;
  width: number;
  possible: number;
}

/**
 * Serves one scenario again under DRAWS other schedules its stamps allow; adds each request's spread of truths and
 * the model's range to `sums`. Returns how many drawn truths fell outside the model's range.
 */
function measure(once: Scenario, b: (typeof BEHAVIOURS)[number], model: ReturnType<typeof expectCache>, seed: number, label: string, sums: Sums): number {
  let outside = 0;
  const rand = rng(seed);
  const lo = serve(once, b);
  const hi = [...lo];
  for (let k = 0; k < DRAWS; k++) {
    const truth = serve(redrawn(once, rand), b);
    truth.forEach((t, i) => {
      const x = model.get(i)!;
      if (t < x.guaranteed || t > x.possible) {
        outside++;
        if (outside <= 3) console.error(`${label}: req ${i} truth ${t} outside [${x.guaranteed}, ${x.possible}]`);
      }
      lo[i] = Math.min(lo[i]!, t);
      hi[i] = Math.max(hi[i]!, t);
    });
  }
  for (let i = 0; i < lo.length; i++) {
    const x = model.get(i)!;
    sums.floor += hi[i]! - lo[i]!;
    sums.floorMax += hi[i]!;
    sums.width += x.possible - x.guaranteed;
    sums.possible += x.possible;
  }
  return outside;
}

const zero = (): Sums => ({ floor: 0, floorMax: 0, width: 0, possible: 0 });
const addTo = (to: Sums, from: Sums) => {
  for (const k of Object.keys(to) as (keyof Sums)[]) to[k] += from[k];
};

/** The checks every scenario shares, and its printed figures. */
function expectFloor(label: string, sums: Sums, rows: readonly string[], outside: number, pressure: boolean): void {
  expect([label, outside]).toEqual([label, 0]);
  // The floor is what the drawn schedules reached; a sound range contains them all, so it is never wider than the model's.
  expect(sums.floor).toBeLessThanOrEqual(sums.width);
  // Under pressure the floor itself is above issue 35's 10 % target (docs/guides/cache-model.md says so): no sound
  // range reading these stamps can meet it. A change to the scenario that loses this must change the guide too.
  if (pressure) expect([label, (100 * sums.floor) / sums.floorMax > 10]).toEqual([label, true]);
  console.log(
    `${label}, stated behaviour, order=fcfs: floor ${pctOf(sums.floor, sums.floorMax)}, model ${pctOf(sums.width, sums.possible)}\n${rows.join("\n")}`,
  );
}

describe("the least width any range can have, from the client's stamps", () => {
  for (const share of [0.25, 1, 2]) {
    test(`sweep points (32 requests at concurrency 4), cache ${share}x the working set: every drawn truth in the model's range; the floor`, () => {
      const rows: string[] = [];
      const sums = zero();
      let outside = 0;
      for (const b of BEHAVIOURS) {
        const each = zero();
        for (const pct of [50, 90]) {
          for (const workingSet of [1, 4, 16]) {
            const once = servedOnce({ pct, workingSet, share }, 7 + pct * 31 + workingSet * 977 + BEHAVIOURS.indexOf(b));
            const model = sweepModelOf(once, { ...b, order: "fcfs" });
            outside += measure(once, b, model, pct * 13 + workingSet, `${nameOf(b)} pct ${pct} ws ${workingSet}`, each);
          }
        }
        addTo(sums, each);
        rows.push(`  ${nameOf(b)}: floor ${pctOf(each.floor, each.floorMax)}, model ${pctOf(each.width, each.possible)}`);
      }
      expectFloor(`sweep, cache ${share}x`, sums, rows, outside, share < 2);
    }, 60_000);
  }

  for (const cacheTokens of [300, 600]) {
    test(`conversations (4 of 4 turns, all in flight), a ${cacheTokens}-token cache: every drawn truth in the model's range; the floor`, () => {
      const rows: string[] = [];
      const sums = zero();
      let outside = 0;
      for (const b of BEHAVIOURS) {
        const each = zero();
        for (const seed of [1, 2, 3, 4]) {
          const once = conversationsOnce(cacheTokens, seed * 101 + BEHAVIOURS.indexOf(b));
          const model = conversationModelOf(once, { ...b, order: "fcfs" });
          outside += measure(once, b, model, seed * 7 + cacheTokens, `${nameOf(b)} conversations seed ${seed}`, each);
        }
        addTo(sums, each);
        rows.push(`  ${nameOf(b)}: floor ${pctOf(each.floor, each.floorMax)}, model ${pctOf(each.width, each.possible)}`);
      }
      expectFloor(`conversations, cache ${cacheTokens} tokens`, sums, rows, outside, true);
    }, 60_000);
  }
});
