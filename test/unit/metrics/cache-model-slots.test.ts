/**
 * The slot cache model (llama.cpp: one prompt cache per slot) against a slot server it shares no code with, written
 * here from llama.cpp's rules alone: a request waits in the server's queue until a slot is idle (taken in an order the
 * client cannot see), takes the idle slot sharing the longest prefix with it when that is over 10 % of its prompt,
 * else the least recently used idle one, reuses the common prefix (at most its prompt - 1 tokens), and leaves its
 * prompt and its answer but the last token in the slot. Over many random schedules - shared prefixes, conversations
 * that extend an earlier answer, slots warmed or empty - every request's truth lies in its range; requests one at a
 * time and conversations that each keep a slot get an exact one.
 */
import { describe, expect, test } from "bun:test";
import type { CacheSequence, ModelRequest } from "../../../src/metrics/cache-model.ts";
import { commonTokens, expectSlotCache } from "../../../src/metrics/slot-cache-model.ts";
import { seededUniform as rng } from "../../../src/metrics/seeded-uniform.ts";

interface Job {
  tokens: number[];
  output: number[];
  /** Client send; the server sees it at `arrive`. */
  s: number;
  arrive: number;
  prefillMs: number;
  decodeMs: number;
  /** How late the client sees the first token and the end. */
  lagMs: number;
  /** Filled by the server: first token and end as the client sees them, and the truth. */
  f: number;
  e: number;
  cached: number;
  /** The slot it ran on (what llama.cpp's id_slot says). */
  slot: number;
}

function common(a: readonly number[], b: readonly number[]): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/**
 * The reference slot server: event by event, waiting requests taken in a random order whenever a slot is idle. Causal:
 * a job added later changes nothing before it arrives, so a schedule can be grown one sent request at a time.
 */
function serve(jobs: Job[], held: Array<number[] | null>, rand: () => number, lruOnly: boolean): void {
  const slots = held.map((h, id) => ({ id, tokens: h ?? [], busyUntil: -Infinity, used: 0 }));
  let tick = 0;
  const waiting: number[] = [];
  const order = jobs.map((_, i) => i).sort((a, b) => jobs[a]!.arrive - jobs[b]!.arrive);
  let next = 0;
  let now = 0;
  const releases: Array<{ t: number; slot: (typeof slots)[number]; job: Job }> = [];
  while (next < order.length || waiting.length > 0 || releases.length > 0) {
    // The next moment: an arrival or a release, whichever is first.
    releases.sort((a, b) => a.t - b.t);
    const tArrive = next < order.length ? jobs[order[next]!]!.arrive : Infinity;
    const tRelease = releases.length > 0 ? releases[0]!.t : Infinity;
    if (tArrive <= tRelease) {
      now = tArrive;
      waiting.push(order[next++]!);
    } else {
      const rel = releases.shift()!;
      now = rel.t;
      rel.slot.tokens = [...rel.job.tokens, ...rel.job.output.slice(0, -1)];
      rel.slot.busyUntil = -Infinity;
      rel.slot.used = ++tick;
    }
    // Schedule what can run now, waiting requests in a random order.
    while (waiting.length > 0 && slots.some((s) => s.busyUntil === -Infinity)) {
      const k = Math.floor(rand() * waiting.length);
      const job = jobs[waiting.splice(k, 1)[0]!]!;
      const idle = slots.filter((s) => s.busyUntil === -Infinity);
      let pick: (typeof slots)[number] | null = null;
      let best = 0;
      if (!lruOnly) {
        for (const s of idle) {
          if (s.tokens.length === 0) continue;
          const sim = common(s.tokens, job.tokens) / job.tokens.length;
          if (sim > best && sim > 0.1) {
            best = sim;
            pick = s;
          }
        }
      }
      if (pick === null) for (const s of idle) if (pick === null || s.used <= pick.used) pick = s;
      job.cached = Math.min(common(pick!.tokens, job.tokens), job.tokens.length - 1);
      job.slot = pick!.id;
      const first = now + job.prefillMs;
      const release = first + job.decodeMs;
      pick!.busyUntil = release;
      job.f = first + job.lagMs;
      job.e = release + job.lagMs;
      releases.push({ t: release, slot: pick!, job });
    }
  }
}

/** One hash id per token, chained: the client's view of token-granular pages. */
function sequenceOf(tokens: readonly number[], ids: Map<string, number>): CacheSequence {
  const hashIds: number[] = [];
  for (let k = 0; k < tokens.length; k++) {
    const key = tokens.slice(0, k + 1).join(",");
    if (!ids.has(key)) ids.set(key, ids.size + 1);
    hashIds.push(ids.get(key)!);
  }
  return { hashIds, length: tokens.length };
}

interface Scenario {
  jobs: Job[];
  held: Array<number[] | null>;
}

function scenario(seed: number, serial: boolean, conversations: boolean): Scenario {
  const rand = rng(seed);
  const slotCount = 1 + Math.floor(rand() * 4);
  const groups = Array.from({ length: 1 + Math.floor(rand() * 3) }, (_, g) =>
    Array.from({ length: 4 + Math.floor(rand() * 12) }, (_, k) => 1000 * (g + 1) + k),
  );
  const held = Array.from({ length: slotCount }, () => (rand() < 0.6 ? groups[Math.floor(rand() * groups.length)]!.slice() : null));
  const jobs: Job[] = [];
  let clock = 0;
  const n = 4 + Math.floor(rand() * 16);
  // Conversations: each client sends its next turn after its last answer, extending it.
  const clients = conversations ? Array.from({ length: slotCount }, (_, c) => ({ last: -1, group: c % groups.length })) : [];
  for (let i = 0; i < n; i++) {
    const own = Array.from({ length: 1 + Math.floor(rand() * 8) }, (_, k) => 100_000 + i * 100 + k);
    const output = Array.from({ length: 1 + Math.floor(rand() * 4) }, (_, k) => 500_000 + i * 100 + k);
    let tokens: number[];
    let s: number;
    if (conversations) {
      const c = clients[i % clients.length]!;
      const prev = c.last >= 0 ? jobs[c.last]! : null;
      tokens = prev === null ? [...groups[c.group]!, ...own] : [...prev.tokens, ...prev.output, ...own];
      s = prev === null ? rand() * 2 : prev.e + rand() * 2;
      c.last = i;
    } else {
      const g = groups[Math.floor(rand() * groups.length)]!;
      const keep = rand() < 0.3 ? Math.floor(rand() * g.length) : g.length;
      // Now and then a prompt that extends an earlier one (a retry, a longer turn).
      const base = jobs.length > 0 && rand() < 0.2 ? jobs[Math.floor(rand() * jobs.length)]! : null;
      tokens = base !== null ? [...base.tokens, ...base.output.slice(0, Math.floor(rand() * base.output.length)), ...own] : [...g.slice(0, keep), ...own];
      clock += serial ? 0 : rand() * 3;
      s = clock;
    }
    const job: Job = {
      tokens,
      output,
      s,
      arrive: s + rand() * 0.5,
      prefillMs: 0.1 + rand(),
      decodeMs: rand() * 3,
      lagMs: rand() * 0.3,
      f: 0,
      e: 0,
      cached: 0,
      slot: -1,
    };
    jobs.push(job);
    if (serial || conversations) {
      // Serve what is planned so far to learn this one's end (the next is sent after it).
      serve(jobs, held, rng(seed), false);
      if (serial) clock = job.e + 1;
    }
  }
  return { jobs, held };
}

function modelOf(sc: Scenario, scanLimit?: number, slotsKnown = false) {
  const ids = new Map<string, number>();
  const reqs: ModelRequest[] = sc.jobs.map((j, k) => ({
    key: k,
    prompt: sequenceOf(j.tokens, ids),
    finished: sequenceOf([...j.tokens, ...j.output.slice(0, -1)], ids),
    startMs: j.s,
    firstTokenMs: j.f,
    endMs: j.e,
    ok: true,
    generated: j.output.length,
    slot: slotsKnown ? j.slot : undefined,
  }));
  return expectSlotCache(reqs, { pageSize: 1, blockSize: 1, held: sc.held.map((h) => (h === null ? null : sequenceOf(h, ids))), scanLimit });
}

describe("slot cache model against an independent llama.cpp-style slot server", () => {
  test("every request's truth lies in its range: overlapping requests, a queue taken in any order", () => {
    let outside = 0;
    let width = 0;
    let possible = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const sc = scenario(seed * 7919, false, false);
      serve(sc.jobs, sc.held, rng(seed), false);
      // Every other seed with the scan cut short: the trie's possible and the given-up guarantees must hold too.
      const model = modelOf(sc, seed % 2 === 0 ? 2 : undefined);
      sc.jobs.forEach((j, i) => {
        const x = model.get(i)!;
        if (j.cached < x.guaranteed || j.cached > x.possible) {
          outside++;
          if (outside <= 3) console.error(`seed ${seed} req ${i}: truth ${j.cached} outside [${x.guaranteed}, ${x.possible}]`);
        }
        width += x.possible - x.guaranteed;
        possible += x.possible;
      });
    }
    expect(outside).toBe(0);
    console.log(`slot model, overlapping: summed width ${width} of summed possible ${possible} (${((100 * width) / possible).toFixed(1)} %)`);
  });

  test("conversations that each send their next turn after their answer: the truth in its range", () => {
    let outside = 0;
    let exact = 0;
    let all = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const sc = scenario(seed * 104_729, false, true);
      const model = modelOf(sc, seed % 2 === 0 ? 3 : undefined);
      sc.jobs.forEach((j, i) => {
        const x = model.get(i)!;
        all++;
        if (x.guaranteed === x.possible) exact++;
        if (j.cached < x.guaranteed || j.cached > x.possible) {
          outside++;
          if (outside <= 3) console.error(`seed ${seed} turn ${i}: truth ${j.cached} outside [${x.guaranteed}, ${x.possible}]`);
        }
      });
    }
    expect(outside).toBe(0);
    // Not exact in general: another conversation's turn may take a slot by its shared prefix, or by least recent use.
    console.log(`slot model, conversations: ${((100 * exact) / all).toFixed(1)} % of ${all} turns exact`);
  });

  test("one request at a time: the range is exactly the truth", () => {
    for (let seed = 1; seed <= 200; seed++) {
      const sc = scenario(seed * 31_337, true, false);
      const model = modelOf(sc);
      sc.jobs.forEach((j, i) => {
        const x = model.get(i)!;
        if (sc.held.length === 1) expect([seed, i, x.guaranteed, x.possible]).toEqual([seed, i, j.cached, j.cached]);
        else expect([seed, i, j.cached >= x.guaranteed && j.cached <= x.possible]).toEqual([seed, i, true]);
      });
    }
  });

  test("a server that ignores prefixes (least recently used slot only) stays inside the range where the prompts share a warmed prefix", () => {
    // Every slot warmed with the one prefix every prompt starts with: whichever slot, the prefix is there.
    let outside = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const rand = rng(seed);
      const prefix = Array.from({ length: 20 }, (_, k) => k + 1);
      const slots = 1 + Math.floor(rand() * 4);
      const jobs: Job[] = Array.from({ length: 12 }, (_, i) => {
        const s = i * rand();
        return {
          tokens: [...prefix, 900 + i, 901 + i],
          output: [7, 8],
          s,
          arrive: s + 0.1,
          prefillMs: 0.5,
          decodeMs: rand(),
          lagMs: 0.05,
          f: 0,
          e: 0,
          cached: 0,
          slot: -1,
        };
      });
      const sc = { jobs, held: Array.from({ length: slots }, () => prefix.slice()) };
      serve(jobs, sc.held, rand, true);
      const model = modelOf(sc);
      jobs.forEach((j, i) => {
        const x = model.get(i)!;
        expect([seed, i, x.guaranteed, x.possible]).toEqual([seed, i, 20, 20]);
        if (j.cached !== 20) outside++;
      });
    }
    expect(outside).toBe(0);
  });

  test("every request's slot known (llama.cpp's id_slot): the truth in its range, and exact unless requests on a slot overlap", () => {
    let outside = 0;
    let exact = 0;
    let all = 0;
    for (let seed = 1; seed <= 300; seed++) {
      for (const conversations of [false, true]) {
        const sc = scenario(seed * 15_485_863, false, conversations);
        if (!conversations) serve(sc.jobs, sc.held, rng(seed), false);
        const model = modelOf(sc, undefined, true);
        sc.jobs.forEach((j, i) => {
          const x = model.get(i)!;
          all++;
          if (x.guaranteed === x.possible) exact++;
          if (j.cached < x.guaranteed || j.cached > x.possible) {
            outside++;
            if (outside <= 3) console.error(`seed ${seed} req ${i}: truth ${j.cached} outside [${x.guaranteed}, ${x.possible}] (slot ${j.slot})`);
          }
        });
      }
    }
    expect(outside).toBe(0);
    console.log(`slot model, slots known: ${((100 * exact) / all).toFixed(1)} % of ${all} requests exact`);
    // Conversations one turn at a time each: every turn's slot and what it held are known.
    for (let seed = 1; seed <= 100; seed++) {
      const sc = scenario(seed * 7_368_787, true, false);
      const model = modelOf(sc, undefined, true);
      sc.jobs.forEach((j, i) => {
        expect([seed, i, model.get(i)!.guaranteed, model.get(i)!.possible]).toEqual([seed, i, j.cached, j.cached]);
      });
    }
  });

  test("common tokens: whole shared segments, then the shorter of a segment both have", () => {
    const a: CacheSequence = { hashIds: [1, 2, 3], ends: [10, 20, 30], length: 30 };
    expect(commonTokens(a, { hashIds: [1, 2, 4], ends: [10, 20, 25], length: 25 }, 1)).toBe(20);
    expect(commonTokens(a, { hashIds: [1, 2], ends: [10, 15], length: 15 }, 1)).toBe(15);
    expect(commonTokens(a, { hashIds: [5], ends: [10], length: 10 }, 1)).toBe(0);
    expect(commonTokens({ hashIds: [1, 2, 3], length: 10 }, { hashIds: [1, 2, 3, 4], length: 16 }, 4)).toBe(10);
  });
});
