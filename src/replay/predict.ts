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
import type { TraceRequest } from "./trace.ts";

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
export const cacheable = (shared: number, inputLength: number, pageSize: number): number =>
  Math.floor(Math.min(shared, inputLength - 1) / pageSize) * pageSize;

type Req = Pick<TraceRequest, "index" | "inputLength" | "outputLength" | "hashIds">;

/** Pages of the capacity, least recently used first (a Map iterates in insertion order). */
class LruPages {
  private readonly pages = new Map<number, true>();
  private readonly capacityPages: number;

  constructor(capacityTokens: number, readonly pageSize: number, private readonly blockSize: number) {
    this.capacityPages = Math.floor(capacityTokens / pageSize);
  }

  /** Page p of a prompt is named by the node of the block holding its last token (which fixes every token before it). */
  private key(path: readonly number[], p: number): number {
    return path[Math.floor(((p + 1) * this.pageSize - 1) / this.blockSize)]! * 1048576 + p;
  }

  /** Cached pages at the start of the prompt, refreshed (deepest first) when found. */
  match(path: readonly number[], pages: number): number {
    let found = 0;
    while (found < pages && this.pages.has(this.key(path, found))) found++;
    this.touch(Array.from({ length: found }, (_, p) => this.key(path, p)));
    return found;
  }

  /** Caches the keys (deepest first, so the shallowest is the most recent), then evicts down to capacity. */
  touch(keys: number[]): void {
    for (let i = keys.length - 1; i >= 0; i--) {
      this.pages.delete(keys[i]!);
      this.pages.set(keys[i]!, true);
    }
    while (this.pages.size > this.capacityPages) this.pages.delete(this.pages.keys().next().value!);
  }

  promptKeys(path: readonly number[], pages: number): number[] {
    return Array.from({ length: pages }, (_, p) => this.key(path, p));
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
    this.lru?.touch(this.lru.promptKeys(path, Math.floor(req.inputLength / this.o.pageSize)));
  }

  /** It ended (after its first token): the server caches its output too, which takes capacity. */
  onFinish(req: Req, generated: number): void {
    const path = this.pathOf(req);
    this.paths.delete(req.index);
    if (this.lru === null) return;
    const page = this.o.pageSize;
    const promptPages = Math.floor(req.inputLength / page);
    const allPages = Math.floor((req.inputLength + Math.max(0, generated - 1)) / page);
    // Output pages are the request's own: negative keys, apart from every prompt page.
    const own = Array.from({ length: allPages - promptPages }, (_, k) => -(req.index * 1048576 + promptPages + k) - 1);
    this.lru.touch([...this.lru.promptKeys(path, promptPages), ...own]);
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
