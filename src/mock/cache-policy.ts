/**
 * How the mock's scheduler admits a request and finds its cached prefix: SGLang's and vLLM's one shared radix
 * cache (any request may start while fewer than --max-running run), or llama.cpp's slots (slot-cache.ts).
 */
import { outputTokenId } from "./output.ts";
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

/**
 * One shared radix cache (with its host tier) and at most maxRunning requests at once. It sees what SGLang's does:
 * the prompt after its prefill, and when a request ends its prompt plus every output token but the last
 * (radix_cache.py cache_finished_req caches `(origin_input_ids + output_ids)[:kv_committed_len]`; the last sampled
 * token never had its KV computed) - so a conversation's next turn finds its whole history cached.
 */
export class RadixPolicy implements CachePolicy {
  constructor(
    private readonly cache: TieredCache,
    private readonly maxRunning: number,
    /** The generated ids (output.ts) depend on it. */
    private readonly vocabSize: number,
    /** Whether a finished request's answer is cached beside its prompt (SGLang: yes). */
    private readonly cacheOutputs = true,
  ) {}

  isFull(running: number): boolean {
    return running >= this.maxRunning;
  }

  claim(req: CacheRequest, running: number): CacheClaim | null {
    if (this.isFull(running)) return null;
    return {
      match: () => this.cache.match(req.inputIds),
      insert: () => this.cache.insert(req.inputIds),
      release: (generated) => this.cacheFinished(req.inputIds, generated),
    };
  }

  /** Nothing new when fewer than 2 tokens were generated. */
  private cacheFinished(input: number[], generated: number): void {
    if (generated < 2 || !this.cacheOutputs) return;
    const ids = new Uint32Array(input.length + generated - 1);
    ids.set(input);
    for (let i = 0; i < generated - 1; i++) ids[input.length + i] = outputTokenId(i, this.vocabSize);
    this.cache.insert(ids);
  }
}
