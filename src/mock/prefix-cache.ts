/**
 * The mock's prefix (KV) cache: a radix tree over token ids in whole pages, modelled on SGLang's
 * RadixCache with --page-size. Edges hold Uint32Array segments (a multiple of the page size long) and
 * are split only on page boundaries, so a 70,000-token prompt costs a handful of nodes, not 70,000.
 *
 * Locks (SGLang's inc_lock_ref/dec_lock_ref): matchLocked() and insertLocked() hold the path they end on, every node
 * from there to the root, until unlock(); eviction takes the least recently used leaf that no lock holds, and when
 * every leaf is held the cache stays over its capacity until a lock drops (unlock() evicts again).
 */

interface RadixNode {
  /** Token ids on the edge from the parent; length is a multiple of the page size (empty for the root). */
  key: Uint32Array;
  parent: RadixNode | null;
  /** Children by their first token id; siblings differ in their first page (usually one per token). */
  children: Map<number, RadixNode[]>;
  /** Recency stamp: a counter value, larger = used more recently. */
  lastUsedTick: number;
  /** Locks holding this node (each lock holds a node and all its ancestors); a held node is never evicted. */
  lockRef: number;
}

/** A hold on the pages from the root to the end of a matched or inserted prefix, until PrefixCache.unlock(). */
export interface CacheLock {
  /** Tokens held (whole pages from the root). */
  readonly tokens: number;
}

/** What a CacheLock is inside: the node its path ends on, in the tree of one epoch (clear() starts a new one). */
interface PathLock extends CacheLock {
  node: RadixNode;
  epoch: number;
  released: boolean;
}

/**
 * Called with the whole sequence (root to the end of the evicted pages) whose tail pages are being evicted, before
 * they go: a lower tier (tiered-cache.ts) keeps them.
 */
export type EvictionSink = (ids: Uint32Array) => void;

/** Radix-tree prefix cache with page granularity and LRU eviction of leaves. */
export class PrefixCache {
  readonly pageSize: number;
  readonly capacityTokens: number;
  private root: RadixNode = newNode(new Uint32Array(0), null, 0);
  private tick = 0;
  /** Bumped by clear(): a lock taken before it holds nothing any more. */
  private epoch = 0;
  private heldTokens = 0;
  private evicted = 0;
  private readonly onEvict: EvictionSink | null;

  constructor(pageSize: number, capacityTokens: number, onEvict: EvictionSink | null = null) {
    if (!Number.isInteger(pageSize) || pageSize < 1) throw new RangeError(`pageSize must be a positive integer, got ${pageSize}`);
    if (!(capacityTokens >= 0)) throw new RangeError(`capacityTokens must be >= 0, got ${capacityTokens}`);
    this.pageSize = pageSize;
    this.capacityTokens = capacityTokens;
    this.onEvict = onEvict;
  }

  /** Tokens held in the cache now. */
  get cachedTokens(): number {
    return this.heldTokens;
  }

  /** Tokens evicted since the cache was created (clear() does not count as eviction). */
  get evictedTokens(): number {
    return this.evicted;
  }

  /**
   * Number of leading tokens of `ids` served from the cache, in whole pages. Capped at len-1 before
   * rounding, because SGLang always computes at least one prompt token. Refreshes the matched path.
   */
  match(ids: ArrayLike<number>): number {
    return this.walk(ids).tokens;
  }

  /**
   * match(), and a lock on the matched pages until unlock(): a running request's prefix that eviction must spare.
   * An edge matched only in part is split where the match ends, so that the lock holds exactly the matched pages.
   */
  matchLocked(ids: ArrayLike<number>): { tokens: number; lock: CacheLock } {
    const found = this.walk(ids);
    const node = found.partial === null ? found.node : splitEdge(found.partial, found.common, found.stamp);
    return { tokens: found.tokens, lock: this.lockPath(node, found.tokens) };
  }

  /** Insert the full pages of `ids` (a prompt after its prefill), then evict down to capacity. */
  insert(ids: ArrayLike<number>): void {
    this.insertPath(ids);
    this.evictToCapacity();
  }

  /** insert(), holding the inserted pages (and the prefix they hang from) until unlock(); then evict what is not held. */
  insertLocked(ids: ArrayLike<number>): CacheLock {
    const node = this.insertPath(ids);
    const lock = this.lockPath(node, ids.length - (ids.length % this.pageSize));
    this.evictToCapacity();
    return lock;
  }

  /** Drop a lock (once; a lock from before a clear() holds nothing), then evict what it held beyond capacity. */
  unlock(lock: CacheLock): void {
    const held = lock as PathLock;
    if (held.released) return;
    held.released = true;
    if (held.epoch !== this.epoch) return;
    for (let n: RadixNode | null = held.node; n !== null && n !== this.root; n = n.parent) n.lockRef--;
    this.evictToCapacity();
  }

  /** Tokens held by at least one lock now (tests). */
  lockedTokens(): number {
    let count = 0;
    const stack: RadixNode[] = [this.root];
    for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
      if (node.lockRef > 0) count += node.key.length;
      for (const list of node.children.values()) stack.push(...list);
    }
    return count;
  }

  /** Drop everything (SGLang's flush_cache resets the tree); locks taken before hold nothing. */
  clear(): void {
    this.root = newNode(new Uint32Array(0), null, 0);
    this.heldTokens = 0;
    this.epoch++;
  }

  /** Number of tree nodes, root excluded (tests check that long prompts stay a few nodes). */
  nodeCount(): number {
    let count = 0;
    const stack: RadixNode[] = [this.root];
    for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
      for (const list of node.children.values()) {
        count += list.length;
        stack.push(...list);
      }
    }
    return count;
  }

  /**
   * The cached prefix of `ids` (capped at len-1, in whole pages): the deepest node wholly matched, and the child edge
   * matched only in part beyond it (`common` tokens of it), if any. Refreshes the wholly matched path.
   */
  private walk(ids: ArrayLike<number>): { tokens: number; node: RadixNode; partial: RadixNode | null; common: number; stamp: number } {
    const limit = ids.length - 1;
    if (limit < this.pageSize) return { tokens: 0, node: this.root, partial: null, common: 0, stamp: this.tick };
    const stamp = ++this.tick;
    let node = this.root;
    let pos = 0;
    node.lastUsedTick = stamp;
    while (pos + this.pageSize <= limit) {
      const child = this.childFor(node, ids, pos);
      if (child === null) break;
      const common = this.commonPages(child.key, ids, pos, limit);
      pos += common;
      // Only fully used edges count as used; insert() splits a partly used one and stamps its upper part.
      if (common < child.key.length) return { tokens: pos, node, partial: common > 0 ? child : null, common, stamp };
      child.lastUsedTick = stamp;
      node = child;
    }
    return { tokens: pos, node, partial: null, common: 0, stamp };
  }

  /** Insert the full pages of `ids` without evicting; returns the node whose edge ends where they end. */
  private insertPath(ids: ArrayLike<number>): RadixNode {
    const end = ids.length - (ids.length % this.pageSize);
    const stamp = ++this.tick;
    let node = this.root;
    let pos = 0;
    while (pos < end) {
      const child = this.childFor(node, ids, pos);
      if (child === null) {
        const leaf = newNode(Uint32Array.from(sliceOf(ids, pos, end)), node, stamp);
        addChild(node, leaf);
        this.heldTokens += leaf.key.length;
        return leaf;
      }
      const common = this.commonPages(child.key, ids, pos, end);
      pos += common;
      if (common < child.key.length) {
        node = splitEdge(child, common, stamp);
      } else {
        child.lastUsedTick = stamp;
        node = child;
      }
    }
    return node;
  }

  /** Lock `node` and every ancestor (the root needs none: it is never evicted). */
  private lockPath(node: RadixNode, tokens: number): CacheLock {
    for (let n: RadixNode | null = node; n !== null && n !== this.root; n = n.parent) n.lockRef++;
    const lock: PathLock = { tokens, node, epoch: this.epoch, released: false };
    return lock;
  }

  /** The child of `node` whose first page equals ids[pos, pos+page), or null. */
  private childFor(node: RadixNode, ids: ArrayLike<number>, pos: number): RadixNode | null {
    const candidates = node.children.get(ids[pos] as number);
    if (candidates === undefined) return null;
    for (const child of candidates) {
      let same = true;
      for (let k = 1; k < this.pageSize; k++) {
        if (child.key[k] !== ids[pos + k]) {
          same = false;
          break;
        }
      }
      if (same) return child;
    }
    return null;
  }

  /** Length of the common prefix of `key` and ids[pos, limit), rounded down to whole pages. */
  private commonPages(key: Uint32Array, ids: ArrayLike<number>, pos: number, limit: number): number {
    const n = Math.min(key.length, limit - pos);
    let i = 0;
    while (i < n && key[i] === ids[pos + i]) i++;
    return i - (i % this.pageSize);
  }

  /**
   * Evict least recently used leaves until the cache fits. A leaf that is larger than the excess
   * loses only its tail pages, so the shared part of a prefix survives as long as possible. Leaves a lock holds
   * are skipped; when only those are left the cache stays over capacity until one is unlocked.
   */
  private evictToCapacity(): void {
    while (this.heldTokens > this.capacityTokens) {
      const leaf = this.leastRecentLeaf();
      if (leaf === null) return;
      const excess = this.heldTokens - this.capacityTokens;
      const dropTokens = Math.min(leaf.key.length, Math.ceil(excess / this.pageSize) * this.pageSize);
      if (this.onEvict !== null) this.onEvict(pathOf(leaf));
      this.heldTokens -= dropTokens;
      this.evicted += dropTokens;
      if (dropTokens < leaf.key.length) {
        leaf.key = leaf.key.slice(0, leaf.key.length - dropTokens);
      } else {
        removeChild(leaf);
      }
    }
  }

  private leastRecentLeaf(): RadixNode | null {
    let best: RadixNode | null = null;
    const stack: RadixNode[] = [this.root];
    for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
      if (node.children.size === 0) {
        if (node !== this.root && node.lockRef === 0 && (best === null || node.lastUsedTick < best.lastUsedTick)) best = node;
        continue;
      }
      for (const list of node.children.values()) stack.push(...list);
    }
    return best;
  }
}

/** The ids from the root to the end of `node`'s edge. */
function pathOf(node: RadixNode): Uint32Array {
  const edges: Uint32Array[] = [];
  let length = 0;
  for (let n: RadixNode | null = node; n !== null; n = n.parent) {
    edges.push(n.key);
    length += n.key.length;
  }
  const ids = new Uint32Array(length);
  let at = 0;
  for (let i = edges.length - 1; i >= 0; i--) {
    ids.set(edges[i] as Uint32Array, at);
    at += (edges[i] as Uint32Array).length;
  }
  return ids;
}

function newNode(key: Uint32Array, parent: RadixNode | null, tick: number): RadixNode {
  return { key, parent, children: new Map(), lastUsedTick: tick, lockRef: 0 };
}

function addChild(parent: RadixNode, child: RadixNode): void {
  child.parent = parent;
  const first = child.key[0] as number;
  const list = parent.children.get(first);
  if (list === undefined) parent.children.set(first, [child]);
  else list.push(child);
}

function removeChild(child: RadixNode): void {
  const parent = child.parent;
  if (parent === null) return;
  const first = child.key[0] as number;
  const list = parent.children.get(first);
  if (list === undefined) return;
  const rest = list.filter((c) => c !== child);
  if (rest.length === 0) parent.children.delete(first);
  else parent.children.set(first, rest);
  child.parent = null;
}

/** Split `node`'s edge after `at` tokens (a page multiple > 0); returns the new upper node, held by `node`'s locks. */
function splitEdge(node: RadixNode, at: number, tick: number): RadixNode {
  const parent = node.parent as RadixNode;
  removeChild(node);
  const upper = newNode(node.key.slice(0, at), parent, tick);
  upper.lockRef = node.lockRef;
  addChild(parent, upper);
  node.key = node.key.slice(at);
  addChild(upper, node);
  return upper;
}

function sliceOf(ids: ArrayLike<number>, start: number, end: number): ArrayLike<number> {
  return Array.isArray(ids) ? ids.slice(start, end) : Array.prototype.slice.call(ids, start, end);
}
