/**
 * Parsing of `warmbench replay TRACE` flags: the trace, its slice and timing, then (without --analyze) the server
 * flags every measuring command shares (options.ts). Every problem is one UsageError naming the flag (exit 2),
 * before anything is sent; the trace itself is checked by src/replay/trace.ts, also before.
 */
import { parsePassportFlag } from "./passport-file.ts";
import { UsageError } from "../errors.ts";
import { REPLAY_DEFAULTS as r } from "../config/flags/replay.ts";
import type { AnalyzeOptions, ReplayOptions } from "../replay/options.ts";
import type { TraceOptions } from "../replay/trace.ts";
import { parseIntFlag, parseNumberFlag, parsePositive, str, type RawFlags } from "../config/flag-values.ts";
import { parseBound } from "../config/flags/bound.ts";
import { parseFidelity, parseReplicas, parseServerTarget, parseSharedTail } from "./options.ts";

const optionalInt = (raw: RawFlags, flag: string, min: number): number | null => {
  const v = str(raw, flag);
  return v === undefined ? null : parseIntFlag(flag, v, min);
};

function traceOptions(raw: RawFlags): TraceOptions {
  const durationRaw = str(raw, "duration");
  return {
    blockSize: parseIntFlag("block-size", str(raw, "block-size") ?? String(r.blockSize), 1),
    skipInvalid: raw["skip-invalid"] === true,
    startS: parseNumberFlag("start", str(raw, "start") ?? "0", 0),
    durationS: durationRaw === undefined ? null : parsePositive("duration", durationRaw, "a number of seconds", false),
    limit: optionalInt(raw, "num-prompts", 1),
  };
}

const tracePath = (raw: RawFlags): string => {
  const path = str(raw, "trace");
  if (path === undefined || path === "") throw new UsageError("replay: expects a Mooncake-format JSONL trace (warmbench replay TRACE)");
  return path;
};

export function parseAnalyzeOptions(raw: RawFlags): AnalyzeOptions {
  return {
    tracePath: tracePath(raw),
    trace: traceOptions(raw),
    pageSize: parseIntFlag("page-size", str(raw, "page-size") ?? String(r.analyzePageSize), 1),
    cacheTokens: optionalInt(raw, "cache-tokens", 1),
    windowS: parsePositive("window", str(raw, "window") ?? String(r.windowS), "a number of seconds", false),
    outputFile: str(raw, "output-file") ?? null,
  };
}

export function parseReplayOptions(raw: RawFlags, env: Record<string, string | undefined> = process.env): ReplayOptions {
  const path = tracePath(raw);
  const target = parseServerTarget(raw, "; --analyze needs none", true);
  // Every bound flag of replay, parsed from its declaration (config/flags/bound.ts); what follows relates several.
  const bound = parseBound("replay", raw, env) as Pick<
    ReplayOptions,
    "backend" | "maxConcurrency" | "ignoreTimestamps" | "timeScale" | "windowS" | "cacheTokens" | "serverCache"
  >;
  const { maxConcurrency, ignoreTimestamps } = bound;
  if (ignoreTimestamps && maxConcurrency === 0) {
    throw new UsageError("--ignore-timestamps: a closed loop needs --max-concurrency C > 0 (requests in flight at once)");
  }
  if (ignoreTimestamps && str(raw, "time-scale") !== undefined) throw new UsageError("--time-scale: with --ignore-timestamps there is no schedule to scale");
  return {
    backend: bound.backend,
    // Token-id prompts: the engine's own generation API (the trace's blocks must reach the server as ids).
    endpoint: "auto",
    ...target,
    maxConcurrency,
    ...parseSharedTail(raw, env, "replay"),
    tracePath: path,
    trace: traceOptions(raw),
    timeScale: bound.timeScale,
    ignoreTimestamps,
    windowS: bound.windowS,
    cacheTokens: bound.cacheTokens,
    serverCache: bound.serverCache,
    ...parseFidelity(raw, "auto"),
    ...parsePassportFlag(raw),
    ...parseReplicas(raw, { workers: null, shard: null }),
  };
}
