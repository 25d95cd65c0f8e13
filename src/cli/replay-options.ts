/**
 * Parsing of `warmbench replay TRACE` flags: the trace, its slice and timing, then (without --analyze) the server
 * flags every measuring command shares (options.ts). Every problem is one UsageError naming the flag (exit 2),
 * before anything is sent; the trace itself is checked by src/replay/trace.ts, also before.
 */
import { parsePassportFlag } from "./passport-file.ts";
import { UsageError } from "../errors.ts";
import { REPLAY_DEFAULTS as r } from "../config/flags/replay.ts";
import type { AnalyzeOptions, ReplayOptions } from "../replay/options.ts";
import { parseIntFlag, str, type RawFlags } from "../config/flag-values.ts";
import { parseBound } from "../config/flags/bound.ts";
import { parseFidelity, parseReplicas, parseServerTarget } from "./options.ts";
import { parseGates } from "../gates/parse.ts";
import { checkGatesMeasurable } from "../gates/plan.ts";

const tracePath = (raw: RawFlags): string => {
  const path = str(raw, "trace");
  if (path === undefined || path === "")
    throw new UsageError("replay: expects a trace: Mooncake JSONL, WEKA agentic sessions or a TraceLab CSV (warmbench replay TRACE)");
  return path;
};

/** What --analyze reads: the trace's flags and the cache model's. It sends nothing, so it reads no server or sending flag. */
const ANALYZE_FIELDS = ["traceFormat", "spawn", "blockSize", "skipInvalid", "startS", "durationS", "pageSize", "cacheTokens", "windowS", "outputFile"] as const;

export function parseAnalyzeOptions(raw: RawFlags, env: Record<string, string | undefined> = process.env): AnalyzeOptions {
  const path = tracePath(raw);
  const { traceFormat, spawn, blockSize, skipInvalid, startS, durationS, pageSize, ...model } = parseBound("replay", raw, env, ANALYZE_FIELDS);
  // --num-prompts without a server is a plain limit (with one, run's check of it: a request must be measured).
  const limitRaw = str(raw, "num-prompts");
  const limit = limitRaw === undefined ? null : parseIntFlag("num-prompts", limitRaw, 1);
  return {
    tracePath: path,
    traceFormat,
    spawn,
    trace: { blockSize, skipInvalid, startS, durationS, limit },
    pageSize: pageSize ?? r.analyzePageSize,
    ...model,
  };
}

export function parseReplayOptions(raw: RawFlags, env: Record<string, string | undefined> = process.env): ReplayOptions {
  const path = tracePath(raw);
  const target = parseServerTarget(raw, "; --analyze needs none", true);
  // Every bound flag of replay, parsed from its declaration (config/flags/bound.ts); what follows relates several.
  // Every field of replay's flags, parsed from its declaration (config/flags/bound.ts) and typed by it: the trace's
  // flags fill the trace's options, --num-prompts its limit (at most this many of its requests).
  const { blockSize, skipInvalid, startS, durationS, numPrompts: limit, ...bound } = parseBound("replay", raw, env);
  const { maxConcurrency, ignoreTimestamps } = bound;
  if (ignoreTimestamps && maxConcurrency === 0) {
    throw new UsageError("--ignore-timestamps: a closed loop needs --max-concurrency C > 0 (requests in flight at once)");
  }
  if (ignoreTimestamps && str(raw, "time-scale") !== undefined) throw new UsageError("--time-scale: with --ignore-timestamps there is no schedule to scale");
  const fidelity = parseFidelity(raw, "auto");
  const replicas = parseReplicas(raw, { workers: null, shard: null });
  // A replay's gates judge its whole line (its windows are the trace's, not the run's): none names a line of its own.
  const gates = parseGates(str(raw, "gate"), str(raw, "gates-file"));
  const scoped = gates.find((g) => g.scope.length > 0);
  if (scoped !== undefined) throw new UsageError(`${scoped.source}: a replay's gates judge the whole replay's line, so a gate names no @scope`);
  checkGatesMeasurable(gates, { "check-fidelity": fidelity.fidelity !== undefined, replicas: replicas.replicas !== undefined });
  return {
    ...bound,
    ...target,
    tracePath: path,
    trace: { blockSize, skipInvalid, startS, durationS, limit },
    gates,
    ...fidelity,
    ...parsePassportFlag(raw),
    ...replicas,
  };
}

/** Mooncake-only flags refused for agentic sessions (whose schedule is their own), naming the flag (exit 2). */
const MOONCAKE_ONLY = ["ignore-timestamps", "start", "duration", "num-prompts", "window", "skip-invalid", "check-fidelity"] as const;

export function checkAgenticFlags(raw: RawFlags): void {
  for (const flag of MOONCAKE_ONLY) {
    if (raw[flag] !== undefined && raw[flag] !== false)
      throw new UsageError(
        `--${flag}: a Mooncake replay's flag; agentic sessions follow their own schedule (--delay-rule, --time-scale, --sessions, --start-at)`,
      );
  }
}

/** The agentic schedule's flags, refused for a Mooncake trace (its rows are independent requests at their timestamps). */
const AGENTIC_ONLY = ["delay-rule", "spawn-rule", "join-rule", "max-idle", "sessions", "start-at"] as const;

export function checkMooncakeFlags(raw: RawFlags): void {
  for (const flag of AGENTIC_ONLY) {
    if (raw[flag] !== undefined) throw new UsageError(`--${flag}: an agentic sessions' flag; a Mooncake trace's rows are sent at their own timestamps`);
  }
}
