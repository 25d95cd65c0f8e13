/**
 * A cache passport (warmbench passport): the server's cache geometry measured from outside. Every figure says how
 * it was measured and how exact it is; a figure that could not be measured is null with the reason.
 */
export const PASSPORT_KIND = "warmbench-passport";
export const PASSPORT_VERSION = 1;

export interface PassportFigure<T> {
  /** null: not measured (`why` says why). */
  value: T | null;
  /** How it was measured, in one sentence. */
  method: string;
  /** How exact the value is ("exact", "+- 16 tokens", "a lower bound"...). */
  uncertainty: string | null;
  /** Why it could not be measured, or what else is known; null when nothing needs saying. */
  why: string | null;
}

export interface Passport {
  kind: typeof PASSPORT_KIND;
  version: typeof PASSPORT_VERSION;
  warmbench_version: string;
  measured_at: string;
  base_url: string;
  engine: string;
  server_version: string | null;
  /** Tokens per cache page: cached tokens come in whole pages. */
  page_size_tokens: PassportFigure<number>;
  /** Tokens the (first-tier) cache holds before its least recent page is evicted. */
  capacity_tokens: PassportFigure<number>;
  /** Whether a finished request's answer is cached beside its prompt. */
  outputs_cached: PassportFigure<boolean>;
  /** When a prompt's pages enter the cache: at its prefill's end, or only when it ends (absent: an older passport). */
  insert_at?: PassportFigure<"prefill" | "finish">;
  /** Which entry goes first when the cache is full: lru, fifo or other. */
  eviction: PassportFigure<"lru" | "fifo" | "other">;
  /** Whether an idle entry survives --idle-wait seconds. */
  idle_expiry: PassportFigure<"none_within_wait" | "expired_within_wait">;
  /** Whether a second tier (host memory, disk) serves hits the first tier evicted, and its capacity. */
  second_tier: PassportFigure<{
    present: boolean;
    total_capacity_tokens: number | null;
    ttft_device_hit_ms: number | null;
    ttft_second_tier_hit_ms: number | null;
    ttft_cold_ms: number | null;
  }>;
  /** llama.cpp: slots, each with a cache of its own, their context, and whether the host-RAM cache restores an erased slot. */
  slots: PassportFigure<{ count: number; context_tokens: number | null; separate_caches: boolean; ram_cache_restores: boolean | null }>;
  /** What /server_info (or the engine's info endpoint) states, to compare with. */
  stated: { page_size: number | null; capacity_tokens: number | null; host_capacity_tokens: number | null; slots: number | null };
  requests_sent: number;
  /** Requests that failed (the figures they were part of are not measured); the first few, with their errors. */
  requests_failed: number;
  failures: string[];
  wall_s: number;
}
