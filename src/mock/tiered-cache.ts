/**
 * The mock's two cache tiers, after SGLang's HiCache (hiradix_cache.py): the device tier is the GPU radix cache
 * (--cache-tokens), the host tier a second radix cache in CPU memory (--host-cache-tokens, 0 = off) that receives
 * the pages the device tier evicts. A prompt's cached prefix is served from the device as far as it reaches there,
 * the rest of it from the host (loaded back at a per-token cost the scheduler charges, and reported as `host` in
 * cached_tokens_details). The host keeps its copy after a load, as HiCache's backed-up nodes do.
 */
import { type CacheLock, PrefixCache } from "./prefix-cache.ts";

/** Where a prompt's cached prefix came from. */
export interface CacheHit {
  /** Cached prompt tokens in all (device + host). */
  tokens: number;
  deviceTokens: number;
  hostTokens: number;
  /** The slot that runs it, on a server with a cache per slot (llama.cpp's final `id_slot`); absent otherwise. */
  slot?: number;
}

export class TieredCache {
  readonly device: PrefixCache;
  /** null when the host tier is off. */
  readonly host: PrefixCache | null;

  constructor(pageSize: number, deviceTokens: number, hostTokens: number) {
    const host = hostTokens > 0 ? new PrefixCache(pageSize, hostTokens) : null;
    this.host = host;
    this.device = new PrefixCache(pageSize, deviceTokens, host === null ? null : (ids) => host.insert(ids));
  }

  /** The cached prefix of `ids`, per tier; refreshes both tiers' recency. */
  match(ids: ArrayLike<number>): CacheHit {
    return this.hitOf(ids, this.device.match(ids));
  }

  /** match(), holding the device pages matched until unlock() (--inflight-pages locked). */
  matchLocked(ids: ArrayLike<number>): { hit: CacheHit; lock: CacheLock } {
    const { tokens, lock } = this.device.matchLocked(ids);
    return { hit: this.hitOf(ids, tokens), lock };
  }

  /** A sequence computed on the device (prefill, or a finished request's prompt and output) enters the device tier. */
  insert(ids: ArrayLike<number>): void {
    this.device.insert(ids);
  }

  /** insert(), holding the inserted device pages until unlock(). */
  insertLocked(ids: ArrayLike<number>): CacheLock {
    return this.device.insertLocked(ids);
  }

  /** Drop a lock taken on the device tier; what it held may be evicted (to the host tier) from now on. */
  unlock(lock: CacheLock): void {
    this.device.unlock(lock);
  }

  /** The hit of `ids` given `deviceTokens` matched on the device: the host tier serves whatever lies beyond. */
  private hitOf(ids: ArrayLike<number>, deviceTokens: number): CacheHit {
    const hostTokens = this.host === null ? 0 : this.host.match(ids);
    if (hostTokens > deviceTokens) return { tokens: hostTokens, deviceTokens, hostTokens: hostTokens - deviceTokens };
    return { tokens: deviceTokens, deviceTokens, hostTokens: 0 };
  }

  /** SGLang's flush_cache resets the host pool with the device tree. */
  clear(): void {
    this.device.clear();
    this.host?.clear();
  }

  /** Tokens held on the device now. */
  get cachedTokens(): number {
    return this.device.cachedTokens;
  }

  /** Tokens evicted from the device so far (moved to the host when it is on). */
  get evictedTokens(): number {
    return this.device.evictedTokens;
  }

  /** Tokens held in the host tier now (0 when it is off). */
  get hostCachedTokens(): number {
    return this.host?.cachedTokens ?? 0;
  }
}
