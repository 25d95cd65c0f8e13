/**
 * Every default lives here, once. The CLI's flag table and the core read from these objects.
 * Names and defaults of the reference script's flags (bench_warm_cache.py) are kept exactly.
 */

export const RUN_DEFAULTS = {
  backend: "sglang",
  baseUrl: null as string | null,
  host: "127.0.0.1",
  port: 30000,
  numPrompts: 64,
  totalTokens: 70000,
  outputLen: 200,
  maxConcurrency: 4,
  pcts: "0,10,20,30,40,50,60,70,80,90,92,95,97,99",
  seed: 42,
  /** Pause after each flush, as the script's time.sleep(1). */
  settleMs: 1000,
  /** How long flush retries (on 400: busy) may go on before the run fails. */
  flushDeadlineS: 60,
  /** Server-side wait passed as /flush_cache?timeout= (SGLang >= 0.5.10; older servers ignore it). */
  flushServerTimeoutS: 10,
  /** Whole-request limit; the script used 20 h. */
  requestTimeoutS: 3600,
  /** No byte at all for this long fails the request as stalled. */
  stallTimeoutS: 300,
  /** HF revision used when a repo id must be downloaded. */
  revision: "main",
} as const;

export const MOCK_DEFAULTS = {
  host: "127.0.0.1",
  port: 30000,
  /** Tokens per KV page; cached_tokens are reported in whole pages, as SGLang with --page-size. */
  pageSize: 1,
  /** Capacity of the prefix cache in tokens (LRU eviction of pages beyond it). */
  cacheTokens: 4_000_000,
  /** Fixed part of the time to first token, ms. */
  ttftBaseMs: 5,
  /** Prefill cost per uncached prompt token, microseconds. */
  prefillUsPerToken: 2,
  /** Gap between decode steps, ms. */
  itlMs: 2,
  /** Tokens per streamed event (SGLang --stream-interval). */
  streamInterval: 1,
  /** Requests decoded at once; more wait in a queue (SGLang --max-running-requests). */
  maxRunning: 256,
  /** Prefill one request at a time, like one GPU. */
  serialPrefill: false,
  /** Text deltas instead of cumulative text (SGLang --incremental-streaming-output). */
  incremental: false,
  contextLength: 131072,
  /** Ids at or above this are rejected with a 400, as a model's embedding would fail on them. */
  vocabSize: 151936,
  modelName: "mock-model",
} as const;

export type Backend = "sglang";

/** Validated options of `warmbench run`; nothing below run.ts sees raw flags. */
export interface RunOptions {
  backend: Backend;
  /** Server base URL without a trailing slash. */
  baseUrl: string;
  model: string;
  /** Tokenizer spec: a tokenizer.json path, a directory holding one, or a Hugging Face repo id. */
  tokenizer: string;
  revision: string;
  numPrompts: number;
  totalTokens: number;
  outputLen: number;
  maxConcurrency: number;
  pcts: number[];
  /** Python int seed, any size; random.Random(seed) uses abs(seed). */
  seed: bigint;
  disableIgnoreEos: boolean;
  outputFile: string | null;
  extraRequestBody: Record<string, unknown>;
  dumpPrompts: string | null;
  settleMs: number;
  flushDeadlineS: number;
  flushServerTimeoutS: number;
  requestTimeoutS: number;
  stallTimeoutS: number;
  /** Server KV page size for the expected cached tokens; null = read /server_info (else 1). */
  pageSize: number | null;
  verbose: boolean;
}

/** Options of `warmbench mock`. */
export interface MockOptions {
  host: string;
  port: number;
  pageSize: number;
  cacheTokens: number;
  ttftBaseMs: number;
  prefillUsPerToken: number;
  itlMs: number;
  streamInterval: number;
  maxRunning: number;
  serialPrefill: boolean;
  incremental: boolean;
  contextLength: number;
  vocabSize: number;
  modelName: string;
  /** Keep every received input_ids array (tests read them back); off for load runs. */
  recordInputs: boolean;
}

export function mockOptions(overrides: Partial<MockOptions> = {}): MockOptions {
  return { ...MOCK_DEFAULTS, recordInputs: false, ...overrides };
}
