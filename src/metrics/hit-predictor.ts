/**
 * Every replayed request's cache hit, predicted before it is sent. The client knows which earlier requests finished
 * their prefill (their first token arrived): the server has cached their prompts. Expected cached tokens of request
 * i = the longest prefix it shares with any of those, in whole pages and at most input_length - 1 (the server
 * computes at least one token). Requests still in prefill may or may not be cached by the time i's prefill starts,
 * so they widen the range: lower = from the finished ones, upper = including those in flight.
 *
 * With the server's cache capacity known, an LRU model of the cache at page granularity (pages touched deepest
 * first, so a prefix outlives its extensions, as a radix cache evicts leaves) lowers the lower bound by the pages it
 * predicts evicted: `evictionLoss` = infinite-cache expectation - the model's. Like SGLang's radix cache the model
 * holds a prompt's full pages after its prefill, and its output too once it ends (output pages hold capacity but no
 * later prompt shares them). Pure: events in, predictions out.
 */
import { BlockTrie } from "./block-trie.ts";
import type { BlockPrompt } from "./block-prompt.ts";

export interface Prediction {
  /** Cached tokens an infinite cache would give from the finished prefills. */
  infinite: number;
  /** The least to expect: `infinite` less the LRU model's predicted eviction. */
  lower: number;
  /** The most to expect: with every request in flight cached too. */
  upper: number;
  /** infinite - lower: hits the LRU model predicts eviction takes. */
  evictionLoss: number;
}

export interface PredictorOptions {
  blockSize: number;
  pageSize: number;
  /** The server's cache capacity in tokens (/server_info); null: unknown, no eviction predicted. */
  capacityTokens: number | null;
}

/** What a cache can serve of a shared prefix: whole pages, at most inputLength - 1 tokens. */
export const cacheable = (shared: number, inputLength: number, pageSize: number): number => Math.floor(Math.min(shared, inputLength - 1) / pageSize) * pageSize;

type Req = BlockPrompt;

/**
 * The cache's pages, held per block node: page p belongs to the node of the block holding its last token (which,
 * with the blocks before it, fixes every token of the page), and a node holds a run of its pages from its first on.
 * The nodes are kept least recently used first (a Map iterates in insertion order); evicting takes pages from the
 * end of the least recent node. A request touches its nodes deepest first, so within it a prefix is always more
 * recent than its extensions - page for page what an LRU over single pages does, at the cost of one entry per block.
 */
class LruPages {
  private readonly held = new Map<number, number>();
  private total = 0;
  private readonly capacityPages: number;

  constructor(
    capacityTokens: number,
    private readonly pageSize: number,
    private readonly blockSize: number,
  ) {
    this.capacityPages = Math.floor(capacityTokens / pageSize);
  }

  /** How many of block j's pages lie in the first `pages` pages of a prompt. */
  private pagesIn(j: number, pages: number): number {
    const lo = Math.ceil((j * this.blockSize + 1) / this.pageSize) - 1;
    const hi = Math.min(Math.floor(((j + 1) * this.blockSize) / this.pageSize), pages);
    return Math.max(0, hi - lo);
  }

  /** Cached pages at the start of the prompt (at most `pages`), refreshed when found. */
  match(path: readonly number[], pages: number): number {
    let found = 0;
    const seen: number[] = [];
    for (let j = 0; j < path.length && found < pages; j++) {
      const want = this.pagesIn(j, pages);
      const have = this.held.get(path[j]!) ?? 0;
      if (have > 0) seen.push(path[j]!);
      found += Math.min(want, have);
      if (have < want) break;
    }
    this.refresh(seen.reverse());
    return found;
  }

  /** The prompt's first `pages` pages are cached (deepest first, so the shallowest is the most recent). */
  insert(path: readonly number[], pages: number): void {
    for (let j = path.length - 1; j >= 0; j--) this.hold(path[j]!, this.pagesIn(j, pages));
    this.evict();
  }

  /** Pages only this request holds (its output): they take capacity, no prompt shares them (evicted at the next insert). */
  holdOwn(key: number, pages: number): void {
    this.hold(key, pages);
  }

  private hold(key: number, pages: number): void {
    if (pages <= 0) return;
    const have = this.held.get(key) ?? 0;
    this.held.delete(key);
    this.held.set(key, Math.max(have, pages));
    this.total += Math.max(0, pages - have);
  }

  private refresh(keys: readonly number[]): void {
    for (const key of keys) {
      const have = this.held.get(key)!;
      this.held.delete(key);
      this.held.set(key, have);
    }
  }

  private evict(): void {
    while (this.total > this.capacityPages) {
      const [key, have] = this.held.entries().next().value!;
      const take = Math.min(have, this.total - this.capacityPages);
      this.total -= take;
      // Setting an existing key keeps its place: what is left of the node stays the least recent.
      if (take === have) this.held.delete(key);
      else this.held.set(key, have - take);
    }
  }
}

export class Predictor {
  private readonly trie: BlockTrie;
  private readonly lru: LruPages | null;
  private readonly paths = new Map<number, number[]>();

  constructor(private readonly o: PredictorOptions) {
    this.trie = new BlockTrie(o.blockSize);
    this.lru = o.capacityTokens === null ? null : new LruPages(o.capacityTokens, o.pageSize, o.blockSize);
  }

  /** Request `req` is about to be sent: its prediction, and it counts as in flight from now on. */
  onSend(req: Req): Prediction {
    const path = this.trie.path(req);
    this.paths.set(req.index, path);
    const page = this.o.pageSize;
    const infinite = cacheable(this.trie.longestShared(path, req.inputLength, "finished"), req.inputLength, page);
    const inflight = cacheable(this.trie.longestShared(path, req.inputLength, "inflight"), req.inputLength, page);
    const modelled = this.lru === null ? infinite : Math.min(infinite, this.lru.match(path, infinite / page) * page);
    this.trie.addInflight(path, req.inputLength);
    return { infinite, lower: modelled, upper: Math.max(infinite, inflight), evictionLoss: infinite - modelled };
  }

  /** Its first token arrived: the server has cached its prompt (full pages). */
  onFirstToken(req: Req): void {
    const path = this.pathOf(req);
    this.trie.removeInflight(path, req.inputLength);
    this.trie.addFinished(path, req.inputLength);
    this.lru?.insert(path, Math.floor(req.inputLength / this.o.pageSize));
  }

  /** It ended (after its first token): the server caches its output too, which takes capacity. */
  onFinish(req: Req, generated: number): void {
    const path = this.pathOf(req);
    this.paths.delete(req.index);
    if (this.lru === null) return;
    const page = this.o.pageSize;
    const promptPages = Math.floor(req.inputLength / page);
    const allPages = Math.floor((req.inputLength + Math.max(0, generated - 1)) / page);
    // The server caches prompt and output as one sequence at the end: the output is its deepest, least recent part.
    this.lru.holdOwn(-(req.index + 1), allPages - promptPages);
    this.lru.insert(path, promptPages);
  }

  /** It failed before its first token: it will never be cached. */
  onFailBeforeFirstToken(req: Req): void {
    this.trie.removeInflight(this.pathOf(req), req.inputLength);
    this.paths.delete(req.index);
  }

  private pathOf(req: Req): number[] {
    const path = this.paths.get(req.index);
    if (path === undefined) throw new Error(`Predictor: request ${req.index} was never sent`);
    return path;
  }
}
