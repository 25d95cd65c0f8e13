/**
 * Options of `warmbench mock`: defaults (once), the flag table, and parsing. Kept beside the mock so that the
 * mock stays a self-contained module; it shares no parsing code with the client.
 */
import type { ArgsDef } from "citty";
import { UsageError } from "../errors.ts";
import { parseIntFlag, parseNumberFlag, type RawFlags } from "../options.ts";

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

const s = (description: string, dflt?: string | number): ArgsDef[string] => ({
  type: "string",
  description: dflt === undefined ? description : `${description} (default: ${dflt})`,
});
const b = (description: string): ArgsDef[string] => ({ type: "boolean", description });
const m = MOCK_DEFAULTS;

/** Flags of `warmbench mock`. */
export const MOCK_ARGS: ArgsDef = {
  host: s("Listen address", m.host),
  port: s("Listen port (0 = any free port)", m.port),
  "page-size": s("KV page size in tokens; cached_tokens come in whole pages", m.pageSize),
  "cache-tokens": s("Prefix-cache capacity in tokens (LRU eviction)", m.cacheTokens),
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
};


const str = (raw: RawFlags, key: string): string | undefined => {
  const v = raw[key];
  if (v === undefined || v === false) return undefined;
  if (v === true) throw new UsageError(`--${key}: expects a value`);
  return v;
};

/** Turns raw `warmbench mock` flags into MockOptions, or throws one UsageError naming the flag. */
export function parseMockOptions(raw: RawFlags): MockOptions {
  const m = MOCK_DEFAULTS;
  const int = (flag: string, dflt: number, min: number, max?: number) => parseIntFlag(flag, str(raw, flag) ?? String(dflt), min, max);
  const num = (flag: string, dflt: number) => parseNumberFlag(flag, str(raw, flag) ?? String(dflt), 0);
  return {
    host: str(raw, "host") ?? m.host,
    port: int("port", m.port, 0, 65535),
    pageSize: int("page-size", m.pageSize, 1),
    cacheTokens: int("cache-tokens", m.cacheTokens, 0),
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
  };
}
