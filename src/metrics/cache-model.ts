/**
 * The one cache model: for every request a server was sent, the cached tokens it can report, as a range
 * [guaranteed, possible] that brackets every legal behaviour of a paged prefix cache with LRU eviction of leaves
 * (SGLang's radix cache, vLLM's prefix cache, the mock). Its inputs are what the client saw - each request's send,
 * first token and end on the client's clock - and what it knows of the server: page size, capacity (stated or
 * measured; unknown: no eviction is assumed) and, where known, how it caches (`CacheBehaviour`).
 *
 * Why a range: the server matches a request's prefix when its prefill starts, somewhere between its send and its
 * first token, and inserts pages at its prefill's end (or only at its finish); the client sees neither moment. So:
 *
 * - guaranteed: the pages certainly inserted before the request was sent (by a request whose last possible touch of
 *   them came before the send) that cannot have been evicted: in an LRU cache of C pages a page is gone only once C
 *   other pages were touched after it, so a page survives while fewer than C distinct pages could have been touched
 *   between its last certain touch and the latest moment of the match (with pages of running requests locked, they
 *   count too);
 * - possible: the pages some request may have inserted before the match's latest moment that were not certainly
 *   evicted: C distinct pages certainly touched after their latest possible touch and before the send.
 *
 * A page's identity is its position and every token before it: prompts are chains of segments (hash ids: a trace's
 * blocks, a sweep's prefix and suffix, a conversation's pages), and a page belongs to the segment holding its last
 * token. Pure and offline: records in, ranges out; it never runs on the hot path.
 */

import type { CacheBehaviour } from "../config/cache-behaviour.ts";

/** Tokens as a chain of segments: `hashIds[j]` names segment j after every segment before it. */
export interface CacheSequence {
  hashIds: readonly number[];
  /** Token end of each segment (cumulative); absent: fixed blocks of the model's `blockSize`. */
  ends?: readonly number[];
  /** Tokens in the sequence (the last segment may end early). */
  length: number;
}

/** One request as the model reads it (times on the client's clock, ms). */
export interface ModelRequest {
  key: number;
  prompt: CacheSequence;
  /**
   * What the server caches when the request ends, where it differs from the prompt plus private pages of its own:
   * the prompt and the answer but its last token, as the next turn of a conversation sends them. Absent: the
   * answer's pages are the request's own (no later prompt shares them).
   */
  finished?: CacheSequence;
  startMs: number;
  /** 0: no first token arrived. */
  firstTokenMs: number;
  endMs: number;
  /** It ended normally (an answer, no failure). */
  ok: boolean;
  /** Tokens it generated. */
  generated: number;
  /** The slot that ran it, where a server with one cache per slot says (llama.cpp's `id_slot`); absent: unknown. */
  slot?: number;
}

export interface CacheModelOptions {
  pageSize: number;
  /** Tokens per hash id where a sequence gives no `ends`. */
  blockSize: number;
  /** The server's cache capacity in tokens; null: unknown (no eviction is assumed; see `Expectation`). */
  capacityTokens: number | null;
  behaviour: CacheBehaviour;
  /** False: only the guaranteed side is wanted (possible is then the infinite cache's, a looser bound), which halves the work. */
  sharpPossible?: boolean;
}

/** What one request can report cached, in tokens. */
export interface Expectation {
  guaranteed: number;
  possible: number;
  /** The same with an infinite cache (the ceiling): what was certainly / possibly inserted before it. */
  infiniteGuaranteed: number;
  infinitePossible: number;
}

/** A request's (or a prior sequence's) touch of its pages: within [a, b] when certain, within [pa, pb] at all. */
/** A walk's segments (trie nodes) and how many pages of each it covers: typed, since a replay holds 10^7 of them. */
type Ints = Int32Array | readonly number[];
interface Walk {
  nodes: Ints;
  pages: Ints;
}

interface Ref {
  owner: number;
  /** When its owner was sent (a prior sequence: when it was touched). */
  sentMs: number;
  nodes: Ints;
  pages: Ints;
  certain: boolean;
  a: number;
  b: number;
  pa: number;
  pb: number;
}

class SegmentTrie {
  /** Per node, its children by segment id (a node is one segment after one exact chain of segments before it). */
  private readonly children: Array<Map<number, number> | undefined> = [undefined];
  private count = 1;

  get size(): number {
    return this.count;
  }

  /** A node no sequence shares (a request's own answer pages). */
  fresh(): number {
    this.children.push(undefined);
    return this.count++;
  }

  /** The nodes of the sequence's segments and how many of each one's pages lie in its first `limitTokens` tokens. */
  walk(seq: CacheSequence, blockSize: number, pageSize: number, limitTokens: number): { nodes: Int32Array; pages: Int32Array } {
    const nodes = new Int32Array(seq.hashIds.length);
    const pages = new Int32Array(seq.hashIds.length);
    let n = 0;
    let node = 0;
    let start = 0;
    for (let j = 0; j < seq.hashIds.length && start < limitTokens; j++) {
      const id = seq.hashIds[j]!;
      const end = Math.min(seq.ends === undefined ? (j + 1) * blockSize : seq.ends[j]!, seq.length);
      let kids = this.children[node];
      if (kids === undefined) {
        kids = new Map();
        this.children[node] = kids;
      }
      let child = kids.get(id);
      if (child === undefined) {
        child = this.count++;
        kids.set(id, child);
        this.children.push(undefined);
      }
      nodes[n] = child;
      pages[n++] = Math.max(0, Math.floor(Math.min(end, limitTokens) / pageSize) - Math.floor(start / pageSize));
      node = child;
      start = end;
    }
    return n === nodes.length ? { nodes, pages } : { nodes: nodes.subarray(0, n), pages: pages.subarray(0, n) };
  }
}

/**
 * Per node, the touches seen so far that no other beats on both counts: covering more of the node's pages, or
 * later. Query: the latest time among touches covering at least `w` pages; else the most pages any touch covers.
 */
class Fronts {
  private readonly lists = new Map<number, number[]>();

  add(node: number, pages: number, t: number): void {
    const list = this.lists.get(node);
    if (list === undefined) {
      this.lists.set(node, [pages, t]);
      return;
    }
    for (let k = 0; k < list.length; k += 2) if (list[k]! >= pages && list[k + 1]! >= t) return;
    // Drop what the new touch beats on both counts, in place (usually the one entry there is).
    let w = 0;
    for (let k = 0; k < list.length; k += 2) {
      if (list[k]! <= pages && list[k + 1]! <= t) continue;
      list[w++] = list[k]!;
      list[w++] = list[k + 1]!;
    }
    list.length = w;
    list.push(pages, t);
  }

  /** [pages covered (at most w), latest time of a touch covering them]; null: never touched. */
  best(node: number, w: number): [number, number] | null {
    const list = this.lists.get(node);
    if (list === undefined) return null;
    let covers = false;
    let bestT = -Infinity;
    let most = 0;
    let mostT = -Infinity;
    for (let k = 0; k < list.length; k += 2) {
      const c = list[k]!;
      const t = list[k + 1]!;
      if (c >= w) {
        covers = true;
        bestT = Math.max(bestT, t);
      } else if (c > most || (c === most && t > mostT)) {
        most = c;
        mostT = t;
      }
    }
    if (covers) return [w, bestT];
    return most > 0 ? [most, mostT] : null;
  }
}

/** Distinct pages over a set of touches, counted with one stamp per node (no allocation per query). */
class DistinctPages {
  private stamp: Int32Array;
  private seen: Int32Array;
  private current = 0;
  total = 0;

  constructor(nodes: number) {
    this.stamp = new Int32Array(nodes);
    this.seen = new Int32Array(nodes);
  }

  reset(): void {
    this.current++;
    this.total = 0;
  }

  /**
   * The touch's pages, less those that extend the chain ending at `depth` in `node` with `pages` of its pages (a
   * page's extensions are never more recent than it: touching one touches it too).
   */
  add(ref: Ref, depth = -1, node = -1, pages = 0): void {
    const extends_ = depth >= 0 && ref.nodes[depth] === node;
    const end = extends_ ? depth + 1 : ref.nodes.length;
    for (let k = 0; k < end; k++) {
      const n = ref.nodes[k]!;
      const p = extends_ && k === depth ? Math.min(pages, ref.pages[k]!) : ref.pages[k]!;
      if (this.stamp[n] !== this.current) {
        this.stamp[n] = this.current;
        this.seen[n] = p;
        this.total += p;
      } else if (p > this.seen[n]!) {
        this.total += p - this.seen[n]!;
        this.seen[n] = p;
      }
    }
  }
}

/** Index of the last element of `sorted` (ascending by `at`) strictly below `t`; -1 when none. */
function lastBelow(sorted: readonly Ref[], at: (r: Ref) => number, t: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (at(sorted[mid]!) < t) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/**
 * The expectation of every request in `requests` (one server's: a routed run calls it once per replica with the
 * requests that replica served). `prior`: sequences the cache holds before the first send (the warm, the flush probe),
 * touched before anything else.
 */
export function expectCache(requests: readonly ModelRequest[], prior: readonly CacheSequence[], o: CacheModelOptions): Map<number, Expectation> {
  const P = o.pageSize;
  const B = o.blockSize;
  const beh = o.behaviour;
  const trie = new SegmentTrie();
  const refs: Ref[] = [];
  const mk = (owner: number, sentMs: number, walked: Walk, certain: boolean, a: number, b: number, pa: number, pb: number): Ref => {
    const ref = { owner, sentMs, nodes: walked.nodes, pages: walked.pages, certain, a, b, pa, pb };
    refs.push(ref);
    return ref;
  };
  // The prior sequences were touched one after another, before the first send.
  const firstSend = requests.reduce((t, r) => Math.min(t, r.startMs), 0);
  prior.forEach((seq, k) => {
    const at = firstSend - 1 - (prior.length - k);
    mk(-1, at, trie.walk(seq, B, P, Math.floor(seq.length / P) * P), true, at, at, at, at);
  });

  const prefillOnly = beh.insertAt === "prefill";
  const lockable = beh.inflightLocked !== false;
  // First come, first served: nothing a request sent later does comes before a request's match.
  const fcfs = beh.order === "fcfs";
  const answers = beh.answersCached !== false;
  const paths = new Map<number, Walk>();
  /** The match refs of prompts inserted only at their finish (each with a second ref for that insertion). */
  const insertedAtFinish: Ref[] = [];
  for (const r of requests) {
    const s = r.startMs;
    const got = r.firstTokenMs > 0;
    const e = Math.max(r.endMs, r.firstTokenMs, s);
    const f = got ? r.firstTokenMs : e;
    // What it may find: at most its first input - 1 tokens, in whole pages (the server computes at least one); the
    // prompt's own walk where that is the same (its length is not a whole number of pages).
    const findable = Math.floor((r.prompt.length - 1) / P) * P;
    const whole = Math.floor(r.prompt.length / P) * P;
    const prompt = trie.walk(r.prompt, B, P, whole);
    paths.set(r.key, findable === whole ? { nodes: prompt.nodes, pages: prompt.pages } : trie.walk(r.prompt, B, P, findable));
    // The prompt is touched at its match and its insertion (by its first token, or its end), and again at its end
    // where the answer is cached with it (or its pages stay locked until then).
    const lastTouch = prefillOnly && !lockable && !answers ? f : e;
    const promptRef = mk(r.key, s, prompt, got && (prefillOnly || r.ok), s, prefillOnly ? f : e, s, lastTouch);
    // Inserted only when it ends (after its first token, as its answer is): the whole prompt is touched again then,
    // and its own pages (no other sequence has them, so its match cannot have found them) only then.
    if (beh.insertAt === "finish" && got && r.generated >= 2) {
      mk(r.key, s, prompt, r.ok, f, e, f, e);
      insertedAtFinish.push(promptRef);
    }
    if (answers && got && r.generated >= 2) {
      // The answer is cached with its prompt when the request ends: both are touched then (after its first token).
      const certain = beh.answersCached === true && r.ok;
      const extra = Math.floor((r.prompt.length + r.generated - 1) / P) - Math.floor(r.prompt.length / P);
      const walked =
        r.finished !== undefined ? trie.walk(r.finished, B, P, Math.floor(r.finished.length / P) * P) : withAnswer(prompt, trie.fresh(), Math.max(0, extra));
      mk(r.key, s, walked, certain, f, e, f, e);
    }
  }

  if (insertedAtFinish.length > 0) ownPagesAtFinish(insertedAtFinish, refs, trie.size);
  compress([...refs, ...paths.values()], trie.size);

  const capacityPages = o.capacityTokens === null ? Infinity : Math.floor(o.capacityTokens / P);
  const counter = new DistinctPages(trie.size);
  counter.reset();
  for (const ref of refs) counter.add(ref);
  // Nothing can be evicted when every page ever touched fits at once.
  const evicts = counter.total > capacityPages;

  const byPa = [...refs].sort((x, y) => x.pa - y.pa);
  const maxPbUpTo = new Float64Array(byPa.length);
  for (let k = 0; k < byPa.length; k++) maxPbUpTo[k] = Math.max(k > 0 ? maxPbUpTo[k - 1]! : -Infinity, byPa[k]!.pb);
  const certainByB = refs.filter((ref) => ref.certain).sort((x, y) => x.b - y.b);

  // A page is held only with every page before it (a prefix outlives its extensions), so a chain of pages fits while
  // it and the distinct pages touched after its last touch fit the capacity together.
  interface Chain {
    ref: Ref;
    /** Where it ends: the depth of its last segment on the request's path, that segment, and its pages there. */
    depth: number;
    node: number;
    pages: number;
  }
  const chainOf = (nodes: Ints, pages: Ints, depths: readonly number[], n: number): Chain => ({
    ref: { owner: -2, sentMs: 0, nodes: nodes.slice(0, n), pages: pages.slice(0, n), certain: true, a: 0, b: 0, pa: 0, pb: 0 },
    depth: depths[n - 1]!,
    node: nodes[n - 1]!,
    pages: pages[n - 1]!,
  });
  /** The chain with what other requests may have touched after t and before fMs can overflow the capacity. */
  const mayOverflow = (owner: number, sentMs: number, chain: Chain, t: number, fMs: number): boolean => {
    counter.reset();
    counter.add(chain.ref);
    if (counter.total > capacityPages) return true;
    for (let k = lastBelow(byPa, (ref) => ref.pa, fMs); k >= 0 && maxPbUpTo[k]! > t; k--) {
      const ref = byPa[k]!;
      if (ref.owner === owner || ref.pb <= t || (fcfs && ref.sentMs > sentMs)) continue;
      counter.add(ref, chain.depth, chain.node, chain.pages);
      if (counter.total > capacityPages) return true;
    }
    return false;
  };
  /** The chain with what was certainly touched after t and before sMs overflows the capacity. */
  const mustOverflow = (chain: Chain, t: number, sMs: number): boolean => {
    counter.reset();
    counter.add(chain.ref);
    if (counter.total > capacityPages) return true;
    for (let k = lastBelow(certainByB, (ref) => ref.b, sMs); k >= 0 && certainByB[k]!.b > t; k--) {
      const ref = certainByB[k]!;
      if (ref.a <= t) continue;
      counter.add(ref);
      if (counter.total > capacityPages) return true;
    }
    return false;
  };

  // One pass in time: touches certainly done (by b) and possibly begun (by pa) before each send, then its queries.
  type Ev = { t: number; kind: 0 | 1 | 2; ref?: Ref; req?: ModelRequest };
  const events: Ev[] = [];
  for (const ref of refs) {
    if (ref.certain) events.push({ t: ref.b, kind: 1, ref });
    events.push({ t: ref.pa, kind: 2, ref });
  }
  for (const r of requests) events.push({ t: r.startMs, kind: 0, req: r });
  // At one instant the query goes first: a touch at the very moment of the send is not before it.
  events.sort((x, y) => x.t - y.t || x.kind - y.kind);
  const done = new Fronts();
  const begun = new Fronts();
  const out = new Map<number, Expectation>();
  for (const ev of events) {
    if (ev.kind === 1) {
      const ref = ev.ref!;
      for (let k = 0; k < ref.nodes.length; k++) if (ref.pages[k]! > 0) done.add(ref.nodes[k]!, ref.pages[k]!, ref.a);
      continue;
    }
    if (ev.kind === 2) {
      const ref = ev.ref!;
      for (let k = 0; k < ref.nodes.length; k++) if (ref.pages[k]! > 0) begun.add(ref.nodes[k]!, ref.pages[k]!, ref.pb);
      continue;
    }
    const r = ev.req!;
    const path = paths.get(r.key)!;
    const s = r.startMs;
    const fMs = r.firstTokenMs > 0 ? r.firstTokenMs : Math.max(r.endMs, s);
    out.set(r.key, expectOne(r, path, s, fMs));
  }
  return out;

  function expectOne(r: ModelRequest, path: Walk, s: number, fMs: number): Expectation {
    // Certain: pages of each segment certainly inserted before the send, with the latest lower bound of their last touch.
    const gNodes: number[] = [];
    const gDepths: number[] = [];
    const gPages: number[] = [];
    const gTimes: number[] = [];
    for (let j = 0; j < path.nodes.length; j++) {
      const w = path.pages[j]!;
      if (w === 0) continue;
      const hit = done.best(path.nodes[j]!, w);
      if (hit === null) break;
      gNodes.push(path.nodes[j]!);
      gDepths.push(j);
      gPages.push(hit[0]);
      gTimes.push(gTimes.length > 0 ? Math.min(gTimes.at(-1)!, hit[1]) : hit[1]);
      if (hit[0] < w) break;
    }
    // Possible: pages any other request may have touched before the match's latest moment (first token), with the
    // latest possible time of that touch: those begun before the send, and those sent while it waited.
    const during: Ref[] = [];
    for (let k = lastBelow(byPa, (ref) => ref.pa, fMs); k >= 0 && byPa[k]!.pa >= s; k--) {
      const ref = byPa[k]!;
      if (ref.owner !== r.key && !(fcfs && ref.sentMs > s)) during.push(ref);
    }
    /** [pages of segment j's first w a touch covers (at most w), the latest possible time of a touch covering them]. */
    const latestTouch = (j: number, w: number): [number, number] | null => {
      const node = path.nodes[j]!;
      let hit = begun.best(node, w);
      for (const ref of during) {
        // Paths from the root line up by depth: a touch of this segment has it at the same place.
        if (ref.nodes[j] !== node) continue;
        const c = Math.min(ref.pages[j]!, w);
        if (hit === null || c > hit[0] || (c === hit[0] && ref.pb > hit[1])) hit = [c, ref.pb];
      }
      return hit === null || hit[0] === 0 ? null : hit;
    };
    const pNodes: number[] = [];
    const pDepths: number[] = [];
    const pPages: number[] = [];
    const pTimes: number[] = [];
    for (let j = 0; j < path.nodes.length; j++) {
      const w = path.pages[j]!;
      if (w === 0) continue;
      const hit = latestTouch(j, w);
      if (hit === null) break;
      pNodes.push(path.nodes[j]!);
      pDepths.push(j);
      pPages.push(hit[0]);
      pTimes.push(hit[1]);
      if (hit[0] < w) break;
    }
    const sum = (xs: readonly number[], n: number): number => xs.slice(0, n).reduce((a, b) => a + b, 0);
    const infiniteGuaranteed = sum(gPages, gPages.length) * P;
    const infinitePossible = sum(pPages, pPages.length) * P;
    if (!evicts) return { guaranteed: Math.min(infiniteGuaranteed, infinitePossible), possible: infinitePossible, infiniteGuaranteed, infinitePossible };
    /** The chain of the first k segments and `c` pages of segment k (each a run of pages, held first page first). */
    const chainTo = (nodes: number[], pages: number[], depths: number[], k: number, c: number): Chain => {
      const cut = pages.slice(0, k + 1);
      cut[k] = c;
      return chainOf(nodes, cut, depths, k + 1);
    };
    // Certain: the longest run of segments none of whose pages can have been pushed out (monotone: deeper is
    // older), then of the first segment that can, its first pages that cannot (a segment loses its last pages first).
    const gHeld = (k: number, c: number): boolean => {
      if (c === 0) return true;
      const t = Math.min(k > 0 ? gTimes[k - 1]! : Infinity, done.best(gNodes[k]!, c)![1]);
      return !mayOverflow(r.key, s, chainTo(gNodes, gPages, gDepths, k, c), t, fMs);
    };
    const g = longestPassing(gTimes.length, (k) => gHeld(k, gPages[k]!));
    const gPart = g < gTimes.length ? longestPassing(gPages[g]!, (c) => gHeld(g, c + 1)) : 0;
    // Possible: the longest run not certainly pushed out (a touch at or after the send: nothing certain came after
    // it), then the first pages of the next segment that may have survived.
    const pHeld = (k: number, c: number): boolean => {
      if (c === 0) return true;
      const t = c === pPages[k] ? pTimes[k]! : latestTouch(pDepths[k]!, c)![1];
      return t >= s || !mustOverflow(chainTo(pNodes, pPages, pDepths, k, c), t, s);
    };
    if (o.sharpPossible === false)
      return { guaranteed: Math.min((sum(gPages, g) + gPart) * P, infinitePossible), possible: infinitePossible, infiniteGuaranteed, infinitePossible };
    const p = longestPassing(pTimes.length, (k) => pHeld(k, pPages[k]!));
    const pPart = p < pTimes.length ? longestPassing(pPages[p]!, (c) => pHeld(p, c + 1)) : 0;
    const possible = (sum(pPages, p) + pPart) * P;
    return { guaranteed: Math.min((sum(gPages, g) + gPart) * P, possible), possible, infiniteGuaranteed, infinitePossible };
  }
}

/**
 * Runs of segments every walk takes whole and together (a prefix shared by a group, a prompt's own pages) become one
 * segment of their pages, in place: a segment joins the next where it has one child and no walk ends in it or covers
 * less than all of it, so every walk still covers a run's pages first to last. The same runs in every walk, so walks
 * still line up by depth; the model's answers do not change, its counting is cheaper.
 */
function compress(walks: ReadonlyArray<Walk>, size: number): void {
  const most = new Int32Array(size);
  for (const w of walks) for (let k = 0; k < w.nodes.length; k++) most[w.nodes[k]!] = Math.max(most[w.nodes[k]!]!, w.pages[k]!);
  /** -1: no child seen; -2: several, or a walk ends here or covers it in part; else its one child. */
  const next = new Int32Array(size).fill(-1);
  for (const w of walks) {
    for (let k = 0; k < w.nodes.length; k++) {
      const n = w.nodes[k]!;
      const after = k + 1 < w.nodes.length ? w.nodes[k + 1]! : -2;
      if (w.pages[k]! < most[n]!) next[n] = -2;
      else if (next[n] === -1) next[n] = after;
      else if (next[n] !== after) next[n] = -2;
    }
  }
  // Walks may share their arrays (a request's path and prompt): each gets its own compressed copy, the input read only.
  const scratchNodes = new Int32Array(walks.reduce((a, w) => Math.max(a, w.nodes.length), 0));
  const scratchPages = new Int32Array(scratchNodes.length);
  for (const w of walks) {
    let n = 0;
    for (let k = 0; k < w.nodes.length; k++) {
      const first = w.nodes[k]!;
      let sum = w.pages[k]!;
      while (k + 1 < w.nodes.length && next[w.nodes[k]!]! >= 0) sum += w.pages[++k]!;
      scratchNodes[n] = first;
      scratchPages[n++] = sum;
    }
    w.nodes = scratchNodes.slice(0, n);
    w.pages = scratchPages.slice(0, n);
  }
}

/**
 * A prompt inserted only at its finish touches its own segments (those no other owner's sequence holds: a segment's
 * path is its chain, so they are the walk's deepest) only at that insertion, not at its match: its first ref keeps the
 * segments others share, the insertion's ref (from its first token) all of them.
 */
function ownPagesAtFinish(matches: readonly Ref[], refs: readonly Ref[], size: number): void {
  // -1: no owner yet; -2: several (the prior sequences count as one owner, -1 in a ref, stored as -3).
  const ownerOf = new Int32Array(size).fill(-1);
  for (const ref of refs) {
    const owner = ref.owner === -1 ? -3 : ref.owner;
    for (let k = 0; k < ref.nodes.length; k++) {
      const n = ref.nodes[k]!;
      if (ownerOf[n] === -1) ownerOf[n] = owner;
      else if (ownerOf[n] !== owner) ownerOf[n] = -2;
    }
  }
  for (const match of matches) {
    let shared = match.nodes.length;
    while (shared > 0 && ownerOf[match.nodes[shared - 1]!] === match.owner) shared--;
    match.nodes = match.nodes.slice(0, shared);
    match.pages = match.pages.slice(0, shared);
  }
}

/** A prompt's walk and one segment more: its answer's own pages. */
function withAnswer(prompt: Walk, node: number, pages: number): Walk {
  const n = prompt.nodes.length;
  const nodes = new Int32Array(n + 1);
  const counts = new Int32Array(n + 1);
  nodes.set(prompt.nodes);
  counts.set(prompt.pages);
  nodes[n] = node;
  counts[n] = pages;
  return { nodes, pages: counts };
}

/** The number of leading indices 0..n-1 that pass, for a test that, once failed, fails for every larger index. */
function longestPassing(n: number, passes: (k: number) => boolean): number {
  // Most often all pass (the prefix is hot): one test.
  if (n === 0 || passes(n - 1)) return n;
  let lo = 0;
  let hi = n - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (passes(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
