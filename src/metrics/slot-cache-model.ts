/**
 * The cache model for a server with one prompt cache per slot (llama.cpp's llama-server, `-np N`, `--cache-ram 0`):
 * each slot holds one sequence, the last request it ran (its prompt and its answer but the last token, which was
 * never decoded), and a request reuses the common prefix with the slot it lands on, at most its prompt - 1 tokens.
 * Which slot that is the client does not see; llama.cpp takes the idle slot sharing the longest prefix with the
 * prompt when that is more than 10 % of it (--slot-prompt-similarity), else the least recently used idle slot.
 *
 * For each request, [guaranteed, possible] cached tokens:
 * - possible: the longest common prefix with anything a slot may hold at its match (what a slot held at the first
 *   send, or the sequence of a request sent before its first token; with one slot, not what a request that certainly
 *   ran in between replaced);
 * - guaranteed: the common prefix with a sequence certainly in an idle slot when it was scheduled, where that prefix
 *   is over the similarity threshold (the server then picks that slot or one sharing more); else the least it shares
 *   with anything its slot may hold. A sequence left by request R stays in its slot until another request Y takes the
 *   slot, which Y can only do where it was scheduled after R began and before this request's first token, and where
 *   Y's own guaranteed does not exceed what that slot would have given it (else Y took another slot). Those
 *   guarantees depend on one another: they start at the bound that holds for any slot choice and are raised, each
 *   step sound given the last, until none moves.
 *
 * Where the server names each request's slot (`ModelRequest.slot`), none of that guessing is needed: a slot holds what
 * the request before it there left, and the range is exact unless requests there overlap on the client's clock.
 *
 * Not bracketed: the host-RAM prompt cache (--cache-ram on: an erase does not reach it, and it restores sequences
 * the client cannot see; the engine's flush check reports it), context shifts of a sequence longer than the slot, and
 * --cache-reuse's chunk matching. Pure and offline: records in, ranges out.
 */
import type { CacheSequence, Expectation, ModelRequest } from "./cache-model.ts";

/** llama.cpp's --slot-prompt-similarity default: a slot is picked by prefix only when it shares more than this share. */
const SIMILARITY = 0.1;

export interface SlotCacheOptions {
  pageSize: number;
  /** Tokens per hash id where a sequence gives no `ends`. */
  blockSize: number;
  /** What each slot held at the first send (the engine's warm, pinned to each slot); null: empty. One entry a slot. */
  held: readonly (CacheSequence | null)[];
  /**
   * The most requests one bound looks through (default 512): beyond, possible comes from a trie of every sequence and
   * the guarantee gives up what it cannot prove in time; never less sound, only less sharp. Keeps 10k requests cheap.
   */
  scanLimit?: number;
}

/** Segment j's token end. */
const endOf = (s: CacheSequence, j: number, blockSize: number): number => Math.min(s.ends === undefined ? (j + 1) * blockSize : s.ends[j]!, s.length);

/** Tokens two sequences share from their start: whole segments with the same id, then the shorter of a segment both have. */
export function commonTokens(a: CacheSequence, b: CacheSequence, blockSize: number): number {
  let start = 0;
  for (let j = 0; j < a.hashIds.length && j < b.hashIds.length; j++) {
    if (a.hashIds[j] !== b.hashIds[j]) break;
    const ea = endOf(a, j, blockSize);
    const eb = endOf(b, j, blockSize);
    if (ea !== eb) return Math.max(start, Math.min(ea, eb));
    start = ea;
  }
  return Math.min(start, a.length, b.length);
}

/** A sequence a slot may hold, and where it came from. */
interface Held {
  seq: CacheSequence;
  /** The request that left it; -1: a slot held it at the first send. */
  by: number;
  /** Slots holding it at the first send (a request's: 1). */
  copies: number;
}

/** The latest settled sequences a guarantee looks at (older ones are rarely still in a slot). */
const RECENT = 64;

export function expectSlotCache(requests: readonly ModelRequest[], o: SlotCacheOptions): Map<number, Expectation> {
  const P = o.pageSize;
  const B = o.blockSize;
  const SCAN = o.scanLimit ?? 512;
  const n = requests.length;
  const startOfAll = requests.reduce((t, r) => Math.min(t, r.startMs), Infinity);
  const firstOf = (r: ModelRequest): number => (r.firstTokenMs > 0 ? r.firstTokenMs : Math.max(r.endMs, r.startMs));
  /** What request r can report of a slot sharing `common` tokens with it: whole pages, at most its prompt - 1. */
  const reportable = (r: ModelRequest, common: number): number => Math.floor(Math.min(common, r.prompt.length - 1) / P) * P;
  const ran = requests.map((r) => r.ok && r.firstTokenMs > 0);
  // In send order, with the longest wait for a first token: a request whose first token came after t was sent after t - that.
  const byStart = requests.map((_, k) => k).sort((a, b) => requests[a]!.startMs - requests[b]!.startMs);
  const starts = byStart.map((k) => requests[k]!.startMs);
  const maxWait = requests.reduce((w, r) => Math.max(w, firstOf(r) - r.startMs, r.endMs - r.startMs), 0);
  /** Positions in `byStart` of the requests sent in [from, to). */
  const sentIn = (from: number, to: number): [number, number] => [lowerBound(starts, from), lowerBound(starts, to)];

  // What each request leaves in its slot: its prompt and answer (but its last token) where it says so, else its prompt.
  const left: Held[] = requests.map((r, k) => ({ seq: r.finished ?? r.prompt, by: k, copies: 1 }));
  const initial: Held[] = [];
  const emptySlot = o.held.some((h) => h === null) || o.held.length === 0;
  for (const seq of o.held) {
    if (seq === null) continue;
    const same = initial.find((h) => sameSequence(h.seq, seq, B));
    if (same !== undefined) same.copies++;
    else initial.push({ seq, by: -1, copies: 1 });
  }
  /** What request x shares with a sequence a slot may hold (a request's: its prompt, or its prompt and answer). */
  const shares = (x: number, h: Held): number => {
    const r = requests[x]!;
    return Math.max(commonTokens(r.prompt, h.seq, B), h.by >= 0 ? commonTokens(r.prompt, requests[h.by]!.prompt, B) : 0);
  };

  // One slot: what it holds was left after the latest send of a request that certainly ran before this one's send.
  const single = o.held.length === 1;
  const latestRunBefore = (x: number): number => {
    let latest = -Infinity;
    const send = requests[x]!.startMs;
    const [lo, hi] = sentIn(-Infinity, send);
    for (let k = hi - 1; k >= lo; k--) {
      const y = byStart[k]!;
      if (y !== x && ran[y] && requests[y]!.firstTokenMs <= send) {
        latest = requests[y]!.startMs;
        break;
      }
    }
    return latest;
  };
  /** Every sequence a slot may hold at x's match; null: too many to list (then only the trie's bounds are used). */
  const mayHold = (x: number): Held[] | null => {
    const f = firstOf(requests[x]!);
    const after = single ? latestRunBefore(x) : -Infinity;
    const [lo, hi] = sentIn(single ? after - maxWait : -Infinity, f);
    if (hi - lo > SCAN) return null;
    const out = after === -Infinity ? [...initial] : [];
    for (let k = lo; k < hi; k++) {
      const y = byStart[k]!;
      if (y !== x && requests[y]!.endMs >= after) out.push(left[y]!);
    }
    return out;
  };
  const trie = new ContentTrie(B);
  for (const h of initial) trie.add(h.seq, -Infinity, -1);
  requests.forEach((r, k) => {
    trie.add(left[k]!.seq, r.startMs, k);
    if (r.finished !== undefined) trie.add(r.prompt, r.startMs, k);
  });

  if (requests.length > 0 && requests.every((r) => r.slot !== undefined && r.slot >= 0 && r.slot < o.held.length)) return knownSlots();

  const listed = requests.map((_, x) => mayHold(x));
  const possible = requests.map((r, x) => {
    const list = listed[x]!;
    if (list === null) return reportable(r, trie.longest(r.prompt, firstOf(r), x));
    return list.reduce((best, h) => Math.max(best, reportable(r, shares(x, h))), 0);
  });
  // Any choice of slot: the least the slot it lands on may share (nothing, where a slot may be empty or too many to list).
  const anyChoice = requests.map((r, x) => {
    const list = listed[x]!;
    const stillEmpty = emptySlot && !(single && latestRunBefore(x) > -Infinity);
    if (stillEmpty || list === null) return 0;
    return list.reduce((least, h) => Math.min(least, reportable(r, shares(x, h))), possible[x]!);
  });
  /** Sequences certainly left in a slot before x's send: the warm, and the latest requests that ended before it. */
  const settled = requests.map((r, x) => {
    const out = [...initial];
    const [lo, hi] = sentIn(-Infinity, r.startMs);
    for (let k = hi - 1, taken = 0; k >= lo && taken < RECENT; k--) {
      const y = byStart[k]!;
      if (y !== x && requests[y]!.ok && requests[y]!.endMs < r.startMs) {
        out.push(left[y]!);
        taken++;
      }
    }
    return out;
  });
  const guaranteed = anyChoice.slice();
  // Raise each guarantee from the others' until none moves (each step is sound given the last: monotone, bounded).
  for (let round = 0; round < n + 1; round++) {
    let moved = false;
    for (let x = 0; x < n; x++) {
      const r = requests[x]!;
      const f = firstOf(r);
      let best = guaranteed[x]!;
      for (const h of settled[x]!) {
        const common = commonTokens(r.prompt, h.seq, B);
        // Only a sequence it would pick the slot of by prefix.
        if (common <= SIMILARITY * r.prompt.length || reportable(r, common) <= best) continue;
        // Another request may have taken that slot where it was scheduled after the sequence was left.
        const since = h.by >= 0 ? requests[h.by]!.startMs : startOfAll;
        const [lo, hi] = sentIn(since - maxWait, f);
        let takers = 0;
        let scanned = 0;
        for (let k = hi - 1; k >= lo && takers < h.copies; k--) {
          const y = byStart[k]!;
          if (y === x || y === h.by) continue;
          const other = requests[y]!;
          if (firstOf(other) <= since) continue;
          // Too many to look at: as if they took it.
          if (++scanned > SCAN) takers = h.copies;
          // Y took another slot where its guarantee beats what this one would have given it.
          else if (!(other.ok && guaranteed[y]! > reportable(other, commonTokens(other.prompt, h.seq, B)))) takers++;
        }
        if (takers < h.copies) best = reportable(r, common);
      }
      if (best > guaranteed[x]!) {
        guaranteed[x] = Math.min(best, possible[x]!);
        moved = true;
      }
    }
    if (!moved) break;
  }

  return rangesOf(guaranteed, possible);

  /**
   * Every request's slot known: its slot holds what the request before it there left (or its warm), unless another
   * request there certainly ran in between; the range is the least and most it shares with those.
   */
  function knownSlots(): Map<number, Expectation> {
    const on = o.held.map((): number[] => []);
    for (const k of byStart) on[requests[k]!.slot!]!.push(k);
    const g: number[] = [];
    const p: number[] = [];
    requests.forEach((r, x) => {
      const mine = on[r.slot!]!;
      // The latest send there of a request that certainly ran before this one's send (so before its match).
      let after = -Infinity;
      for (const y of mine) if (y !== x && ran[y] && requests[y]!.firstTokenMs <= r.startMs) after = Math.max(after, requests[y]!.startMs);
      const found: number[] = [];
      const warm = o.held[r.slot!];
      if (after === -Infinity) found.push(warm === null || warm === undefined ? 0 : reportable(r, commonTokens(r.prompt, warm, B)));
      const f = firstOf(r);
      for (const y of mine) {
        const other = requests[y]!;
        if (y === x || other.startMs >= f || other.endMs < after) continue;
        // A request that failed may have left any part of what it computed: nothing is certain of it.
        const most = reportable(r, shares(x, left[y]!));
        found.push(most);
        if (!other.ok) found.push(0);
      }
      g.push(found.length === 0 ? 0 : Math.min(...found));
      p.push(found.length === 0 ? 0 : Math.max(...found));
    });
    return rangesOf(g, p);
  }

  function rangesOf(guaranteed: readonly number[], possible: readonly number[]): Map<number, Expectation> {
    const out = new Map<number, Expectation>();
    requests.forEach((r, x) => {
      const g = Math.min(guaranteed[x]!, possible[x]!);
      out.set(r.key, { guaranteed: g, possible: possible[x]!, infiniteGuaranteed: g, infinitePossible: possible[x]! });
    });
    return out;
  }
}

/** The first index of `sorted` (ascending) at or above t. */
function lowerBound(sorted: readonly number[], t: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Every sequence a slot may hold, as a trie of segments; per node, who left a sequence through it, from when, and how
 * far into the node it reaches. Query: the longest prefix of a prompt some other request's sequence, left from before
 * a moment, shares with it.
 */
class ContentTrie {
  private readonly children: Array<Map<number, number>> = [new Map()];
  /** Per node: [from, owner, end] triples, sorted by from once built. */
  private readonly entries: number[][] = [[]];
  private sorted = true;

  constructor(private readonly blockSize: number) {}

  add(seq: CacheSequence, from: number, owner: number): void {
    let node = 0;
    for (let j = 0; j < seq.hashIds.length; j++) {
      const id = seq.hashIds[j]!;
      let child = this.children[node]!.get(id);
      if (child === undefined) {
        child = this.children.length;
        this.children[node]!.set(id, child);
        this.children.push(new Map());
        this.entries.push([]);
      }
      this.entries[child]!.push(from, owner, endOf(seq, j, this.blockSize));
      node = child;
      if (endOf(seq, j, this.blockSize) >= seq.length) break;
    }
    this.sorted = false;
  }

  longest(prompt: CacheSequence, before: number, self: number): number {
    if (!this.sorted) this.sort();
    let node = 0;
    let best = 0;
    let start = 0;
    for (let j = 0; j < prompt.hashIds.length; j++) {
      const child = this.children[node]!.get(prompt.hashIds[j]!);
      if (child === undefined) break;
      const mine = endOf(prompt, j, this.blockSize);
      const list = this.entries[child]!;
      // The furthest reach of another's sequence there from before the moment (latest first: most reach it all).
      let reach = -1;
      for (let k = upperTriple(list, before) - 3; k >= 0 && reach < mine; k -= 3) if (list[k + 1] !== self) reach = Math.max(reach, list[k + 2]!);
      if (reach < 0) break;
      best = Math.max(best, Math.min(reach, mine));
      if (reach < mine) break;
      start = mine;
      node = child;
    }
    return Math.min(Math.max(best, start), prompt.length);
  }

  private sort(): void {
    for (let n = 0; n < this.entries.length; n++) {
      const list = this.entries[n]!;
      const triples: number[][] = [];
      for (let k = 0; k < list.length; k += 3) triples.push([list[k]!, list[k + 1]!, list[k + 2]!]);
      triples.sort((a, b) => a[0]! - b[0]!);
      this.entries[n] = triples.flat();
    }
    this.sorted = true;
  }
}

/** The offset just past the last triple of `list` (sorted by its first) whose first is below t. */
function upperTriple(list: readonly number[], t: number): number {
  let lo = 0;
  let hi = list.length / 3;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid * 3]! < t) lo = mid + 1;
    else hi = mid;
  }
  return lo * 3;
}

function sameSequence(a: CacheSequence, b: CacheSequence, blockSize: number): boolean {
  return a.length === b.length && commonTokens(a, b, blockSize) === a.length;
}
