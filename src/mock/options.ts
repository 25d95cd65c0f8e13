/**
 * Options of `warmbench mock`: defaults (once), the flag table, and parsing. Kept beside the mock so that the
 * mock stays a self-contained module; it shares no parsing code with the client.
 */
import type { ArgsDef } from "citty";
import { UsageError } from "../errors.ts";

/** Flag values as citty hands them over, keyed by kebab-case name. */
export type RawFlags = Record<string, string | boolean | undefined>;

/** Which server the mock answers as (its endpoints and stream shapes). */
export const PERSONALITIES = ["sglang", "vllm", "llamacpp", "openai"] as const;
export type Personality = (typeof PERSONALITIES)[number];

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
  /** The first N /flush_cache (and the first N /reset_prefix_cache) calls fail. */
  flushFailFirst: 0,
  /** /generate answers 404, as a server that is not SGLang. */
  noGenerate: false,
  /** The server dies once the N-th measured request is admitted (0 = never). */
  exitAfter: 0,
  /** Flushes report success but keep the cache. */
  flushLies: false,
  /** Ground-truth JSONL file (one line per finished request), or null for none. */
  truthFile: null,
  /** /reset_prefix_cache answers 404, as vLLM without VLLM_SERVER_DEV_MODE=1. */
  noDevMode: false,
  /** /metrics answers 404, as SGLang without --enable-metrics. */
  noMetrics: false,
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
  flushFailFirst: number;
  noGenerate: boolean;
  exitAfter: number;
  flushLies: boolean;
  truthFile: string | null;
  noDevMode: boolean;
  noMetrics: boolean;
}

/** MockOptions from the defaults plus `overrides` (tests, demo). */
export function mockOptions(overrides: Partial<MockOptions> = {}): MockOptions {
  return { ...MOCK_DEFAULTS, recordInputs: false, ...overrides };
}

const s = (description: string, dflt?: string | number): ArgsDef[string] => ({
  type: "string",
  description: dflt === undefined ? description : `${description} (default: ${dflt})`,
});
const b = (description: string): ArgsDef[string] => ({ type: "boolean", description });
const m = MOCK_DEFAULTS;

/** Flags of `warmbench mock`. */
export const MOCK_ARGS: ArgsDef = {
  personality: s(`Which server to answer as: ${PERSONALITIES.join(", ")}`, m.personality),
  slots: s("llamacpp: parallel slots, each with its own prompt cache", m.slots),
  "cache-ram": b("llamacpp: keep a host-RAM prompt cache that survives slot erases (llama.cpp's default)"),
  "no-slot-save-path": b("llamacpp: slot erase answers 501 (a server started without --slot-save-path)"),
  tokenizer: s("tokenizer.json for chat messages (default: one token per UTF-8 byte)"),
  host: s("Listen address", m.host),
  port: s("Listen port (0 = any free port)", m.port),
  "page-size": s("KV page size in tokens; cached_tokens come in whole pages", m.pageSize),
  "cache-tokens": s("Prefix-cache (device tier) capacity in tokens (LRU eviction)", m.cacheTokens),
  "host-cache-tokens": s("Host-tier capacity in tokens: the device tier's evicted pages move there (0 = no host tier)", m.hostCacheTokens),
  "host-load-us-per-token": s("Cost of loading a cached token back from the host tier, µs", m.hostLoadUsPerToken),
  "ttft-base-ms": s("Fixed part of the time to first token, ms", m.ttftBaseMs),
  "prefill-us-per-token": s("Prefill cost per uncached prompt token, µs", m.prefillUsPerToken),
  "itl-ms": s("Gap between decode steps, ms", m.itlMs),
  "stream-interval": s("Tokens per streamed event", m.streamInterval),
  "max-running": s("Requests running at once; more wait in a queue", m.maxRunning),
  "serial-prefill": b("Prefill one request at a time, like one GPU"),
  incremental: b("Stream text deltas (--incremental-streaming-output) instead of cumulative text"),
  "context-length": s("Model context length in tokens", m.contextLength),
  "vocab-size": s("Largest accepted token id + 1", m.vocabSize),
  "model-name": s("Served model name", m.modelName),
  "record-inputs": b("Keep every received input_ids list for GET /mock/received"),
  "fail-every": s("Answer every N-th measured request 503 before streaming (0 = off)", m.failEvery),
  "error-event-every": s("Every N-th measured request: an error event after 2 token events", m.errorEventEvery),
  "abort-every": s("Every N-th measured request: an abort finish_reason after 2 token events", m.abortEvery),
  "reset-every": s("Every N-th measured request: reset the connection after 2 token events", m.resetEvery),
  "stall-every": s("Every N-th measured request: send nothing for --stall-s after 2 token events", m.stallEvery),
  "stall-s": s("Length of a stall, seconds", m.stallS),
  "slow-headers-ms": s("Delay before the status line and headers of every /generate, ms", m.slowHeadersMs),
  "malformed-every": s("Every N-th measured request: one event with broken JSON after 2 token events", m.malformedEvery),
  "invalid-utf8-every": s("Every N-th measured request: one token event with an invalid UTF-8 byte", m.invalidUtf8Every),
  "flush-fail-first": s("The first N /flush_cache and /reset_prefix_cache calls fail", m.flushFailFirst),
  "no-generate": b("Answer /generate with 404 (a server that is not SGLang)"),
  "exit-after": s("Die (close every socket, exit 0) once the N-th measured request is admitted (0 = never)", m.exitAfter),
  "flush-lies": b("Flushes report success but keep the cache"),
  truth: s("Append one ground-truth JSONL line per finished request to this file"),
  "no-dev-mode": b("Answer /reset_prefix_cache with 404 (vLLM without VLLM_SERVER_DEV_MODE=1)"),
  "no-metrics": b("Answer /metrics with 404 (SGLang without --enable-metrics)"),
};


const str = (raw: RawFlags, key: string): string | undefined => {
  const v = raw[key];
  if (v === undefined || v === false) return undefined;
  if (v === true) throw new UsageError(`--${key}: expects a value`);
  return v;
};

function truthFile(value: string | undefined): string | null {
  if (value === undefined) return MOCK_DEFAULTS.truthFile;
  if (value.trim() === "") throw new UsageError("--truth: expects a file name");
  return value;
}

/** `--no-X` flags: citty parses a declared "no-X" boolean as X = false, so accept both spellings. */
const negated = (raw: RawFlags, key: string): boolean => raw[`no-${key}`] === true || raw[key] === false;

/**
 * A numeric flag's value within [min, max]; `whole` takes integers only (underscores allowed, as Python's int()).
 * The mock's own: it shares no parsing code with the client.
 */
function flagValue(flag: string, text: string, whole: boolean, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const cleaned = whole ? text.trim().replaceAll("_", "") : text.trim();
  const shapeOk = whole ? /^[+-]?\d+$/.test(cleaned) : cleaned !== "";
  const n = shapeOk ? Number(cleaned) : NaN;
  if (!Number.isFinite(n)) throw new UsageError(`--${flag}: expected ${whole ? "an integer" : "a number"}, got "${text}"`);
  if (whole && !Number.isSafeInteger(n)) throw new UsageError(`--${flag}: ${text} is too large`);
  if (n < min || n > max) throw new UsageError(`--${flag}: must be ${n < min ? `>= ${min}` : `<= ${max}`}, got ${n}`);
  return n;
}

/** Turns raw `warmbench mock` flags into MockOptions, or throws one UsageError naming the flag. */
export function parseMockOptions(raw: RawFlags): MockOptions {
  const m = MOCK_DEFAULTS;
  const int = (flag: string, dflt: number, min: number, max?: number) => flagValue(flag, str(raw, flag) ?? String(dflt), true, min, max);
  const num = (flag: string, dflt: number) => flagValue(flag, str(raw, flag) ?? String(dflt), false, 0);
  const personality = str(raw, "personality") ?? m.personality;
  if (!(PERSONALITIES as readonly string[]).includes(personality)) {
    throw new UsageError(`--personality: "${personality}" is not supported (choose from: ${PERSONALITIES.join(", ")})`);
  }
  return {
    personality: personality as Personality,
    slots: int("slots", m.slots, 1, 1024),
    cacheRam: raw["cache-ram"] === true,
    noSlotSavePath: negated(raw, "slot-save-path"),
    tokenizer: str(raw, "tokenizer") ?? m.tokenizer,
    host: str(raw, "host") ?? m.host,
    port: int("port", m.port, 0, 65535),
    pageSize: int("page-size", m.pageSize, 1),
    cacheTokens: int("cache-tokens", m.cacheTokens, 0),
    hostCacheTokens: int("host-cache-tokens", m.hostCacheTokens, 0),
    hostLoadUsPerToken: num("host-load-us-per-token", m.hostLoadUsPerToken),
    ttftBaseMs: num("ttft-base-ms", m.ttftBaseMs),
    prefillUsPerToken: num("prefill-us-per-token", m.prefillUsPerToken),
    itlMs: num("itl-ms", m.itlMs),
    streamInterval: int("stream-interval", m.streamInterval, 1),
    maxRunning: int("max-running", m.maxRunning, 1),
    serialPrefill: raw["serial-prefill"] === true,
    incremental: raw.incremental === true,
    contextLength: int("context-length", m.contextLength, 2),
    vocabSize: int("vocab-size", m.vocabSize, 1),
    modelName: str(raw, "model-name") ?? m.modelName,
    recordInputs: raw["record-inputs"] === true,
    failEvery: int("fail-every", m.failEvery, 0),
    errorEventEvery: int("error-event-every", m.errorEventEvery, 0),
    abortEvery: int("abort-every", m.abortEvery, 0),
    resetEvery: int("reset-every", m.resetEvery, 0),
    stallEvery: int("stall-every", m.stallEvery, 0),
    stallS: num("stall-s", m.stallS),
    slowHeadersMs: num("slow-headers-ms", m.slowHeadersMs),
    malformedEvery: int("malformed-every", m.malformedEvery, 0),
    invalidUtf8Every: int("invalid-utf8-every", m.invalidUtf8Every, 0),
    flushFailFirst: int("flush-fail-first", m.flushFailFirst, 0),
    noGenerate: negated(raw, "generate"),
    exitAfter: int("exit-after", m.exitAfter, 0),
    flushLies: raw["flush-lies"] === true,
    truthFile: truthFile(str(raw, "truth")),
    noDevMode: negated(raw, "dev-mode"),
    noMetrics: negated(raw, "metrics"),
  };
}
