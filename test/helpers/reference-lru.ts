/**
 * A page-level LRU prefix cache written from the rules alone, sharing no code with src/metrics/cache-model.ts: a
 * page is its position and every token before it; a page goes only when no cached page extends it and no running
 * request holds it; the least recently touched goes first, the deeper of a tie. `serve` drives it through server-side
 * moments the client never sees (each match, prefill end and finish), giving every request's true cached tokens.
 */

export interface Served {
  /** Its prefix group and how much of that prefix it starts with. */
  group: number;
  prefixLen: number;
  tokens: number[];
  output: number[];
  s: number;
  m: number;
  p: number;
  f: number;
  d: number;
  e: number;
}

/** Page names, interned: a page is named by its parent page and its own tokens, so by its position and every token before it. */
const NAMES = new Map<string, number>();
/** Each token array's full pages, named (the schedules redrawn over one scenario reuse its arrays). */
const PAGES = new WeakMap<readonly number[], { page: number; ids: number[] }>();

function pagesOf(tokens: readonly number[], page: number): number[] {
  const known = PAGES.get(tokens);
  if (known !== undefined && known.page === page) return known.ids;
  const ids: number[] = [];
  let parent = 0;
  for (let k = 0; (k + 1) * page <= tokens.length; k++) {
    const name = `${parent}|${tokens.slice(k * page, (k + 1) * page).join(",")}`;
    let id = NAMES.get(name);
    if (id === undefined) {
      id = NAMES.size + 1;
      NAMES.set(name, id);
    }
    ids.push(id);
    parent = id;
  }
  PAGES.set(tokens, { page, ids });
  return ids;
}

/** The reference server. */
class ReferenceCache {
  private readonly used = new Map<number, number>();
  private readonly depth = new Map<number, number>();
  /** Each cached page's parent (the page before it on its path; 0 for a first page). */
  private readonly parent = new Map<number, number>();
  /** How many cached pages extend each page: only a page none extends may go. */
  private readonly children = new Map<number, number>();
  private readonly locks = new Map<number, number>();
  private tick = 0;

  constructor(
    private readonly page: number,
    private readonly capacityPages: number,
  ) {}

  /** Cached pages at the start of `tokens` (at most len - 1 tokens), touched. */
  match(tokens: readonly number[]): { pages: number; keys: number[] } {
    const keys = pagesOf(tokens, this.page).slice(0, Math.floor((tokens.length - 1) / this.page));
    let n = 0;
    while (n < keys.length && this.used.has(keys[n]!)) n++;
    this.touch(keys.slice(0, n));
    return { pages: n, keys: keys.slice(0, n) };
  }

  insert(tokens: readonly number[]): number[] {
    const keys = pagesOf(tokens, this.page);
    this.touch(keys);
    this.evict();
    return keys;
  }

  lock(keys: readonly number[], by: number): void {
    for (const k of keys) this.locks.set(k, (this.locks.get(k) ?? 0) + by);
  }

  private touch(keys: readonly number[]): void {
    // One moment for the whole path; the deeper page is the less recent of a tie (a prefix outlives its extensions).
    const t = ++this.tick;
    keys.forEach((k, depth) => {
      const parent = depth === 0 ? 0 : keys[depth - 1]!;
      if (!this.used.has(k)) this.children.set(parent, (this.children.get(parent) ?? 0) + 1);
      this.used.set(k, t);
      this.depth.set(k, depth);
      this.parent.set(k, parent);
    });
  }

  evict(): void {
    while (this.used.size > this.capacityPages) {
      let victim: number | null = null;
      for (const [k, t] of this.used) {
        if ((this.children.get(k) ?? 0) > 0 || (this.locks.get(k) ?? 0) > 0) continue;
        const vt = victim === null ? 0 : this.used.get(victim)!;
        if (victim === null || t < vt || (t === vt && this.depth.get(k)! > this.depth.get(victim)!)) victim = k;
      }
      if (victim === null) return; // everything held is locked: over capacity until a lock drops
      this.used.delete(victim);
      const parent = this.parent.get(victim)!;
      this.children.set(parent, this.children.get(parent)! - 1);
    }
  }
}

export interface Scenario {
  page: number;
  capacityPages: number;
  prior: number[][];
  requests: Served[];
}

/** A request's prompt and its answer but the last token, one array per answer (so its pages are named once). */
const ANSWERS = new WeakMap<readonly number[], number[]>();
function answerOf(r: Served): number[] {
  let a = ANSWERS.get(r.output);
  if (a === undefined) {
    a = [...r.tokens, ...r.output.slice(0, -1)];
    ANSWERS.set(r.output, a);
  }
  return a;
}

/** Runs the reference server through the schedule; returns each request's true cached tokens. */
export function serve(sc: Scenario, beh: { insertAt: "prefill" | "finish"; answersCached: boolean; inflightLocked: boolean }): number[] {
  const cache = new ReferenceCache(sc.page, sc.capacityPages);
  for (const tokens of sc.prior) cache.insert(tokens);
  type Ev = { t: number; order: number; run: () => void };
  const evs: Ev[] = [];
  const truth: number[] = [];
  const held: number[][] = sc.requests.map(() => []);
  sc.requests.forEach((r, i) => {
    const hold = (keys: number[]) => {
      if (!beh.inflightLocked) return;
      cache.lock(keys, 1);
      held[i]!.push(...keys);
    };
    evs.push({
      t: r.m,
      order: 0,
      run: () => {
        const hit = cache.match(r.tokens);
        truth[i] = hit.pages * sc.page;
        hold(hit.keys);
      },
    });
    if (beh.insertAt === "prefill") evs.push({ t: r.p, order: 1, run: () => hold(cache.insert(r.tokens)) });
    evs.push({
      t: r.d,
      order: 2,
      run: () => {
        if (beh.insertAt === "finish") cache.insert(r.tokens);
        if (beh.answersCached && r.output.length >= 2) cache.insert(answerOf(r));
        cache.lock(held[i]!, -1);
        cache.evict();
      },
    });
  });
  evs.sort((a, b) => a.t - b.t || a.order - b.order);
  for (const ev of evs) ev.run();
  return truth;
}
