/**
 * How the mock's scheduler admits a request and finds its cached prefix: SGLang's and vLLM's one shared radix
 * cache (any request may start while fewer than --max-running run), or llama.cpp's slots (slot-cache.ts).
 */
import type { InflightPages, InsertAt } from "./options.ts";
import { outputTokenId } from "./output.ts";
import type { CacheLock } from "./prefix-cache.ts";
import type { CacheHit, TieredCache } from "./tiered-cache.ts";

/** What the policy needs of a request. */
export interface CacheRequest {
  inputIds: number[];
  /** llama.cpp's id_slot: the slot this request must run on; null lets the server choose. */
  idSlot: number | null;
  /** llama.cpp's cache_prompt: false computes the whole prompt (the slot still keeps it). */
  cachePrompt: boolean;
}

/** A request admitted by the policy: where its cache lives until it ends. */
export interface CacheClaim {
  /** The prompt's prefix served from the cache (per tier); matched when prefill starts. */
  match(): CacheHit;
  /** Prefill done: the prompt is cached (or, with --insert-at finish, will be when the request ends). */
  insert(): void;
  /** The request ended after generating `generated` tokens (or was cancelled). */
  release(generated: number): void;
}

export interface CachePolicy {
  /** No request at all can start while `running` requests run. */
  isFull(running: number): boolean;
  /** Admit the request now (`running` requests run), or null to keep it waiting. */
  claim(req: CacheRequest, running: number): CacheClaim | null;
}

/** The legal server behaviours a RadixPolicy can take (mock flags; the defaults are SGLang's). */
export interface RadixBehaviour {
  /** Whether a finished request's answer is cached beside its prompt (SGLang: yes; --no-output-cache). */
  cacheOutputs?: boolean;
  /** When the prompt enters the cache: after its prefill (SGLang) or when the request ends (--insert-at). */
  insertAt?: InsertAt;
  /** Whether a running request's matched and inserted pages can be evicted before it ends (--inflight-pages). */
  inflightPages?: InflightPages;
}

/**
 * One shared radix cache (with its host tier) and at most maxRunning requests at once. It sees what SGLang's does:
 * the prompt after its prefill, and when a request ends its prompt plus every output token but the last
 * (radix_cache.py cache_finished_req caches `(origin_input_ids + output_ids)[:kv_committed_len]`; the last sampled
 * token never had its KV computed) - so a conversation's next turn finds its whole history cached.
 *
 * With insertAt "finish" nothing enters the cache while a request runs: a request that got past its prefill inserts
 * its prompt (and its answer, where answers are cached) when it ends, however it ends; one cancelled before inserts
 * nothing. With inflightPages "locked" the pages a request matched, then the prompt it inserted, are held until it
 * ends (SGLang's inc_lock_ref/dec_lock_ref), so eviction spares them.
 */
export class RadixPolicy implements CachePolicy {
  private readonly cacheOutputs: boolean;
  private readonly insertAt: InsertAt;
  private readonly locked: boolean;

  constructor(
    private readonly cache: TieredCache,
    private readonly maxRunning: number,
    /** The generated ids (output.ts) depend on it. */
    private readonly vocabSize: number,
    behaviour: RadixBehaviour = {},
  ) {
    this.cacheOutputs = behaviour.cacheOutputs ?? true;
    this.insertAt = behaviour.insertAt ?? "prefill";
    this.locked = (behaviour.inflightPages ?? "evictable") === "locked";
  }

  isFull(running: number): boolean {
    return running >= this.maxRunning;
  }

  claim(req: CacheRequest, running: number): CacheClaim | null {
    if (this.isFull(running)) return null;
    const ids = req.inputIds;
    /** What this request holds in the cache while it runs (locked pages only). */
    let lock: CacheLock | null = null;
    let prefilled = false;
    const hold = (next: CacheLock | null): void => {
      const previous = lock;
      lock = next;
      if (previous !== null) this.cache.unlock(previous);
    };
    return {
      match: () => {
        if (!this.locked) return this.cache.match(ids);
        const { hit, lock: matched } = this.cache.matchLocked(ids);
        hold(matched);
        return hit;
      },
      insert: () => {
        prefilled = true;
        if (this.insertAt !== "prefill") return;
        if (this.locked) hold(this.cache.insertLocked(ids));
        else this.cache.insert(ids);
      },
      release: (generated) => {
        if (prefilled) this.cacheFinished(ids, generated);
        hold(null);
      },
    };
  }

  /**
   * A request past its prefill ended after `generated` tokens: its prompt and every output token but the last go in
   * where answers are cached (nothing new before 2 tokens), and with insertAt "finish" the prompt goes in regardless.
   */
  private cacheFinished(input: number[], generated: number): void {
    if (generated < 2 || !this.cacheOutputs) {
      if (this.insertAt === "finish") this.cache.insert(input);
      return;
    }
    const ids = new Uint32Array(input.length + generated - 1);
    ids.set(input);
    for (let i = 0; i < generated - 1; i++) ids[input.length + i] = outputTokenId(i, this.vocabSize);
    this.cache.insert(ids);
  }
}
