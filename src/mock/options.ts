/**
 * Options of `warmbench mock`: defaults (once), the flag declarations, and the parsing they drive. Kept beside the
 * mock so that it stays a self-contained module: it shares no code with the client but the error type (the cli
 * layer turns these declarations into citty's args, the help and the docs, as it does the client's).
 */
import { existsSync, statSync } from "node:fs";
import { isIP } from "node:net";
import { dirname, resolve } from "node:path";
import { UsageError } from "../errors.ts";

/** Which server the mock answers as (its endpoints and stream shapes). */
const PERSONALITIES = ["sglang", "vllm", "llamacpp", "openai"] as const;
export type Personality = (typeof PERSONALITIES)[number];

/**
 * When a request's prompt pages enter the radix cache: at the end of its prefill (SGLang's cache_unfinished_req), or
 * only when it ends (then the prompt, and the answer where answers are cached, go in together).
 */
const INSERT_AT = ["prefill", "finish"] as const;
export type InsertAt = (typeof INSERT_AT)[number];

/**
 * Whether the pages a running request matched or inserted may be evicted while it runs (evictable), or are held
 * until it ends (locked: SGLang's inc_lock_ref/dec_lock_ref on the radix nodes).
 */
const INFLIGHT_PAGES = ["evictable", "locked"] as const;
export type InflightPages = (typeof INFLIGHT_PAGES)[number];

export const MOCK_DEFAULTS = {
  /**
   * sglang: SGLang's native API plus vLLM's OpenAI one (warmbench 0.1's mock); vllm: vLLM only (/version, no
   * /generate); llamacpp: llama-server (/props, /slots, per-slot caches); openai: a bare OpenAI-compatible server.
   */
  personality: "sglang" as Personality,
  /** llamacpp: parallel slots (-np), each with its own prompt cache. */
  slots: 4,
  /** llamacpp: the host-RAM prompt cache (llama.cpp's default is on; off here unless asked). */
  cacheRam: false,
  /** llamacpp: slot actions answer 501, as a server started without --slot-save-path. */
  noSlotSavePath: false,
  /** tokenizer.json that chat messages are tokenized with; null: one token per UTF-8 byte. */
  tokenizer: null as string | null,
  host: "127.0.0.1",
  port: 30000,
  /** Tokens per KV page; cached_tokens are reported in whole pages, as SGLang with --page-size. */
  pageSize: 1,
  /** Capacity of the prefix cache (the device tier) in tokens (LRU eviction of pages beyond it). */
  cacheTokens: 4_000_000,
  /** When a request's prompt enters the radix cache (see INSERT_AT). */
  insertAt: "prefill" as InsertAt,
  /** Whether a running request's cached pages can be evicted (see INFLIGHT_PAGES). */
  inflightPages: "evictable" as InflightPages,
  /** Capacity of the host tier (SGLang HiCache's CPU pool) that receives the device tier's evicted pages; 0 = off. */
  hostCacheTokens: 0,
  /** Cost of loading one cached token back from the host tier, µs (added to the prefill). */
  hostLoadUsPerToken: 1,
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
  // Fault injection (see faults.ts). An "every N" of 0 is off; it hits the k-th measured request when k % N == 0.
  failEvery: 0,
  errorEventEvery: 0,
  abortEvery: 0,
  resetEvery: 0,
  stallEvery: 0,
  /** How long a stall fault sends nothing, seconds. */
  stallS: 5,
  /** Every /generate waits this long before its status line and headers, ms. */
  slowHeadersMs: 0,
  malformedEvery: 0,
  invalidUtf8Every: 0,
  /**
   * The k-th measured request (k % N == 0) that would hit the cache recomputes its whole prompt: it reports no cached
   * tokens and pays the full prefill, and still inserts its prompt. Independent of the other "every N" faults.
   */
  faultForgetEvery: 0,
  /** The first N /flush_cache (and the first N /reset_prefix_cache) calls fail. */
  flushFailFirst: 0,
  /** /generate answers 404, as a server that is not SGLang. */
  noGenerate: false,
  /** The server dies once the N-th measured request is admitted (0 = never). */
  exitAfter: 0,
  /** Flushes report success but keep the cache. */
  flushLies: false,
  faultWrongKv: false,
  noOutputCache: false,
  noPromptTokensDetails: false,
  servedByHeader: null as string | null,
  faultTieFlip: false,
  /** Ground-truth JSONL file (one line per finished request), or null for none. */
  truthFile: null as string | null,
  /** /reset_prefix_cache answers 404, as vLLM without VLLM_SERVER_DEV_MODE=1. */
  noDevMode: false,
  /** /metrics answers 404, as SGLang without --enable-metrics. */
  noMetrics: false,
  /** Percent of each request's cached tokens the /metrics cached-token counter leaves out (a counter that lies). */
  faultMetricsUndercount: 0,
} as const;

/** Options of `warmbench mock`. */
export interface MockOptions {
  personality: Personality;
  slots: number;
  cacheRam: boolean;
  noSlotSavePath: boolean;
  tokenizer: string | null;
  host: string;
  port: number;
  pageSize: number;
  cacheTokens: number;
  insertAt: InsertAt;
  inflightPages: InflightPages;
  hostCacheTokens: number;
  hostLoadUsPerToken: number;
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
  failEvery: number;
  errorEventEvery: number;
  abortEvery: number;
  resetEvery: number;
  stallEvery: number;
  stallS: number;
  slowHeadersMs: number;
  malformedEvery: number;
  invalidUtf8Every: number;
  /** A measured request whose ordinal is a multiple of N and that would hit the cache reports none and recomputes. */
  faultForgetEvery: number;
  flushFailFirst: number;
  noGenerate: boolean;
  exitAfter: number;
  flushLies: boolean;
  /** A request whose prompt hit the cache answers another text from its second token on (logprob answers). */
  faultWrongKv: boolean;
  /** A finished request's answer is not cached (only its prompt), as an engine that caches prompts only. */
  noOutputCache: boolean;
  /** vLLM: usage without prompt_tokens_details (no cached tokens reported), as vLLM without --enable-prompt-tokens-details. */
  noPromptTokensDetails: boolean;
  /** Every answer carries this header naming the server (host:port), as a router names the upstream it chose. */
  servedByHeader: string | null;
  /** A request whose prompt hit the cache flips its first near-tied token (logprob answers). */
  faultTieFlip: boolean;
  truthFile: string | null;
  noDevMode: boolean;
  noMetrics: boolean;
  faultMetricsUndercount: number;
}

/** MockOptions from the defaults plus `overrides` (tests, demo). */
export function mockOptions(overrides: Partial<MockOptions> = {}): MockOptions {
  return { ...MOCK_DEFAULTS, recordInputs: false, ...overrides };
}

/** Raw flag values as citty hands them over. */
export type MockRawFlags = Record<string, string | boolean | undefined>;

/** One mock flag: what `--help` and the docs show, and the option it sets. */
export interface MockFlag {
  name: string;
  type: "string" | "boolean";
  help: string;
  default?: string | number;
  key: keyof MockOptions;
  /** The option's value from the flag's text (strings) or presence (booleans). */
  read: (value: string | boolean) => MockOptions[keyof MockOptions];
}

const m = MOCK_DEFAULTS;
type NumericKey = { [K in keyof MockOptions]: MockOptions[K] extends number ? K : never }[keyof MockOptions];

/** An integer in [min, max] (Python int syntax, `_` allowed), or a UsageError naming the flag. */
function wholeNumber(flag: string, text: string, min: number, max: number): number {
  const digits = text.trim().replaceAll("_", "");
  const n = /^[+-]?\d+$/.test(digits) ? Number(digits) : NaN;
  if (!Number.isSafeInteger(n)) throw new UsageError(`--${flag}: expected an integer, got "${text}"`);
  if (n < min) throw new UsageError(`--${flag}: must be >= ${min}, got ${n}`);
  if (n > max) throw new UsageError(`--${flag}: must be <= ${max}, got ${n}`);
  return n;
}

const int = (name: string, key: NumericKey, help: string, min = 0, max = Number.MAX_SAFE_INTEGER): MockFlag => ({
  name,
  key,
  help,
  type: "string",
  default: m[key] as number,
  read: (v) => wholeNumber(name, String(v), min, max),
});
const num = (name: string, key: NumericKey, help: string): MockFlag => ({
  name,
  key,
  help,
  type: "string",
  default: m[key] as number,
  read: (v) => {
    const n = String(v).trim() === "" ? NaN : Number(v);
    if (!Number.isFinite(n) || n < 0) throw new UsageError(`--${name}: expected a number >= 0, got "${v}"`);
    return n;
  },
});
const flag = (name: string, key: keyof MockOptions, help: string): MockFlag => ({ name, key, help, type: "boolean", read: (v) => v === true });
const text = (name: string, key: keyof MockOptions, help: string, dflt?: string): MockFlag => ({
  name,
  key,
  help,
  type: "string",
  default: dflt,
  read: (v) => {
    if (String(v).trim() === "") throw new UsageError(`--${name}: expects a value`);
    return String(v);
  },
});

/** A string flag whose value is one of `choices`. */
const choice = <T extends string>(name: string, key: keyof MockOptions, choices: readonly T[], dflt: T, help: string): MockFlag => ({
  ...text(name, key, help, dflt),
  read: (v) => {
    if (!(choices as readonly unknown[]).includes(v)) throw new UsageError(`--${name}: "${v}" is not supported (choose from: ${choices.join(", ")})`);
    return v as T;
  },
});

/** Every flag of `warmbench mock`, once. */
export const MOCK_FLAGS: readonly MockFlag[] = [
  {
    ...text("personality", "personality", `Which server to answer as: ${PERSONALITIES.join(", ")}`, m.personality),
    read: (v) => {
      if (!(PERSONALITIES as readonly unknown[]).includes(v))
        throw new UsageError(`--personality: "${v}" is not supported (choose from: ${PERSONALITIES.join(", ")})`);
      return v as Personality;
    },
  },
  int("slots", "slots", "llamacpp: parallel slots, each with its own prompt cache", 1, 1024),
  flag("cache-ram", "cacheRam", "llamacpp: keep a host-RAM prompt cache that survives slot erases (llama.cpp's default)"),
  flag("no-slot-save-path", "noSlotSavePath", "llamacpp: slot erase answers 501 (a server started without --slot-save-path)"),
  text("tokenizer", "tokenizer", "tokenizer.json for chat messages (default: one token per UTF-8 byte)"),
  text("host", "host", "Listen address", m.host),
  int("port", "port", "Listen port (0 = any free port)", 0, 65535),
  int("page-size", "pageSize", "KV page size in tokens; cached_tokens come in whole pages", 1),
  int("cache-tokens", "cacheTokens", "Prefix-cache (device tier) capacity in tokens (LRU eviction)"),
  text("served-by-header", "servedByHeader", "Name this server (its host:port) in every answer's header NAME, as a router names its upstream (X-Served-By)"),
  flag(
    "no-prompt-tokens-details",
    "noPromptTokensDetails",
    "vllm: report no cached tokens (usage without prompt_tokens_details, as vLLM without --enable-prompt-tokens-details)",
  ),
  flag("no-output-cache", "noOutputCache", "Cache prompts only: a finished request's answer is not cached (SGLang caches it)"),
  choice(
    "insert-at",
    "insertAt",
    INSERT_AT,
    m.insertAt,
    "When a request's prompt enters the radix cache: prefill (when its prefill ends, as SGLang) or finish (only when the request ends)",
  ),
  choice(
    "inflight-pages",
    "inflightPages",
    INFLIGHT_PAGES,
    m.inflightPages,
    "Whether the cached pages a running request matched or inserted can be evicted before it ends: evictable, or locked (SGLang's lock_ref)",
  ),
  int("host-cache-tokens", "hostCacheTokens", "Host-tier capacity in tokens: the device tier's evicted pages move there (0 = no host tier)"),
  num("host-load-us-per-token", "hostLoadUsPerToken", "Cost of loading a cached token back from the host tier, µs"),
  num("ttft-base-ms", "ttftBaseMs", "Fixed part of the time to first token, ms"),
  num("prefill-us-per-token", "prefillUsPerToken", "Prefill cost per uncached prompt token, µs"),
  num("itl-ms", "itlMs", "Gap between decode steps, ms"),
  int("stream-interval", "streamInterval", "Tokens per streamed event", 1),
  int("max-running", "maxRunning", "Requests running at once; more wait in a queue", 1),
  flag("serial-prefill", "serialPrefill", "Prefill one request at a time, like one GPU"),
  flag("incremental", "incremental", "Stream text deltas (--incremental-streaming-output) instead of cumulative text"),
  int("context-length", "contextLength", "Model context length in tokens", 2),
  int("vocab-size", "vocabSize", "Largest accepted token id + 1", 1),
  text("model-name", "modelName", "Served model name", m.modelName),
  flag("record-inputs", "recordInputs", "Keep every received input_ids list for GET /mock/received"),
  int("fail-every", "failEvery", "Answer every N-th measured request 503 before streaming (0 = off)"),
  int("error-event-every", "errorEventEvery", "Every N-th measured request: an error event after 2 token events"),
  int("abort-every", "abortEvery", "Every N-th measured request: an abort finish_reason after 2 token events"),
  int("reset-every", "resetEvery", "Every N-th measured request: reset the connection after 2 token events"),
  int("stall-every", "stallEvery", "Every N-th measured request: send nothing for --stall-s after 2 token events"),
  num("stall-s", "stallS", "Length of a stall, seconds"),
  num("slow-headers-ms", "slowHeadersMs", "Delay before the status line and headers of every /generate, ms"),
  int("malformed-every", "malformedEvery", "Every N-th measured request: one event with broken JSON after 2 token events"),
  int("invalid-utf8-every", "invalidUtf8Every", "Every N-th measured request: one token event with an invalid UTF-8 byte"),
  int(
    "fault-forget-every",
    "faultForgetEvery",
    "Every N-th measured request, if it would hit the cache: report 0 cached tokens and recompute the whole prompt (still cached after)",
  ),
  int("flush-fail-first", "flushFailFirst", "The first N /flush_cache and /reset_prefix_cache calls fail"),
  flag("no-generate", "noGenerate", "Answer /generate with 404 (a server that is not SGLang)"),
  int("exit-after", "exitAfter", "Die (close every socket, exit 0) once the N-th measured request is admitted (0 = never)"),
  flag("flush-lies", "flushLies", "Flushes report success but keep the cache"),
  flag(
    "fault-wrong-kv",
    "faultWrongKv",
    "A request that hit the cache answers another text from its second token on (wrong KV; seen in answers with log-probabilities)",
  ),
  flag(
    "fault-tie-flip",
    "faultTieFlip",
    "A request that hit the cache flips its first near-tied token (a numerics change; seen in answers with log-probabilities)",
  ),
  text("truth", "truthFile", "Append one ground-truth JSONL line per finished request to this file"),
  flag("no-dev-mode", "noDevMode", "Answer /reset_prefix_cache with 404 (vLLM without VLLM_SERVER_DEV_MODE=1)"),
  flag("no-metrics", "noMetrics", "Answer /metrics with 404 (SGLang without --enable-metrics)"),
  int(
    "fault-metrics-undercount",
    "faultMetricsUndercount",
    "/metrics' cached-token counter leaves out this percent of every request's cached tokens (a lying counter)",
    0,
    100,
  ),
];

/**
 * The raw value of `f` as citty parsed it, or undefined when not given. citty reads a declared "no-X" boolean as
 * X = false, so a negated flag is found under either name.
 */
function given(raw: MockRawFlags, f: MockFlag): string | boolean | undefined {
  if (f.type === "string") return raw[f.name] === true ? "" : (raw[f.name] as string | undefined);
  const negatedOff = f.name.startsWith("no-") && raw[f.name.slice(3)] === false;
  return raw[f.name] === true || negatedOff ? true : undefined;
}

/** Turns raw `warmbench mock` flags into MockOptions from the declarations, or throws one UsageError naming the flag. */
export function parseMockOptions(raw: MockRawFlags): MockOptions {
  const opts: Record<string, unknown> = { ...mockOptions() };
  for (const f of MOCK_FLAGS) {
    const value = given(raw, f);
    if (value !== undefined) opts[f.key] = f.read(value);
  }
  checkMockPaths(opts as unknown as MockOptions);
  return opts as unknown as MockOptions;
}

/**
 * What the mock would only find out once serving (0.3: "internal error" exit 1, or an EISDIR per request in its log):
 * a tokenizer that is not a file, a host that is no address, a truth file that is a directory. Exit 2, naming the flag.
 */
function checkMockPaths(o: MockOptions): void {
  if (o.tokenizer !== null && !isFile(o.tokenizer)) throw new UsageError(`--tokenizer ${o.tokenizer}: no such file (a tokenizer.json)`);
  if (/^[\d.]+$/.test(o.host) && isIP(o.host) === 0) throw new UsageError(`--host ${o.host}: not an IP address`);
  if (o.truthFile !== null) {
    if (existsSync(o.truthFile) && statSync(o.truthFile).isDirectory()) throw new UsageError(`--truth ${o.truthFile}: a directory; give a file to append to`);
    const dir = dirname(resolve(o.truthFile));
    if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UsageError(`--truth ${o.truthFile}: directory ${dir} does not exist`);
  }
}

const isFile = (path: string): boolean => existsSync(path) && statSync(path).isFile();
