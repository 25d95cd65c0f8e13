/**
 * How the mock's scheduler admits a request and finds its cached prefix: SGLang's and vLLM's one shared radix
 * cache (any request may start while fewer than --max-running run), or llama.cpp's slots (slot-cache.ts).
 */
import type { PrefixCache } from "./prefix-cache.ts";

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
  /** Prompt tokens served from the cache; matched when prefill starts. */
  match(): number;
  /** Prefill done: the prompt is cached. */
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

/** One shared radix cache and at most maxRunning requests at once. */
export class RadixPolicy implements CachePolicy {
  constructor(
    private readonly cache: PrefixCache,
    private readonly maxRunning: number,
  ) {}

  isFull(running: number): boolean {
    return running >= this.maxRunning;
  }

  claim(req: CacheRequest, running: number): CacheClaim | null {
    if (this.isFull(running)) return null;
    return {
      match: () => this.cache.match(req.inputIds),
      insert: () => this.cache.insert(req.inputIds),
      release: () => {},
    };
  }
}
