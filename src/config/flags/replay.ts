/** The flags only `warmbench replay TRACE` takes (the ones it shares with run are declared in measure.ts). */
import { parseIntFlag, parsePositive } from "../flag-values.ts";
import type { FlagDecl } from "./types.ts";

/** Defaults of the replay's own flags (the flags' declarations and the parser read them). */
export const REPLAY_DEFAULTS = {
  /** Tokens per hash id: the Mooncake FAST'25 release's. */
  blockSize: 512,
  timeScale: 1,
  /** Trace seconds per window line. */
  windowS: 60,
  /** The page size --analyze assumes without --page-size. */
  analyzePageSize: 1,
  /** Closed loop (--ignore-timestamps): requests in flight. */
  maxConcurrency: 0,
} as const;

const r = REPLAY_DEFAULTS;

const replay = { replay: true } as const;
const text = (name: string, help: string, more: Partial<FlagDecl> = {}): FlagDecl => ({ name, type: "string", help, commands: replay, ...more });
const bool = (name: string, help: string): FlagDecl => ({ name, type: "boolean", help, commands: replay });

export const REPLAY_FLAGS: FlagDecl[] = [
  { name: "trace", type: "positional", help: "Mooncake-format JSONL trace: one {timestamp, input_length, output_length, hash_ids} per line", commands: replay },
  bool("analyze", "Describe the trace without a server: lengths, the hit ratio of an infinite cache, the working set per --window against --cache-tokens"),
  text("block-size", "Tokens per hash id of the trace (Mooncake's FAST'25 release: 512; others use 16 or 64)", { default: r.blockSize }),
  bool(
    "skip-invalid",
    "Drop (and count) trace lines that are malformed, do not fit --block-size, go back in time or exceed the model's context, instead of exit 2",
  ),
  text("start", "Replay from this trace second on", { default: 0 }),
  text("time-scale", "Multiply the trace's timestamps: 0.1 sends ten times faster", {
    default: r.timeScale,
    bind: { field: "timeScale", value: (t, f) => parsePositive(f, t, "a scale, e.g. 0.1", false) },
  }),
  {
    ...bool("ignore-timestamps", "Closed loop in trace order: the next request as soon as one of --max-concurrency slots is free"),
    bind: { field: "ignoreTimestamps", parse: (raw) => raw["ignore-timestamps"] === true },
  },
  text("window", "Trace seconds per window line (axis window)", {
    default: r.windowS,
    bind: { field: "windowS", value: (t, f) => parsePositive(f, t, "a number of seconds", false) },
  }),
  text("cache-tokens", "Cache capacity for the LRU model of evictions (default: the server's, from /server_info; --analyze: none)", {
    bind: { field: "cacheTokens", value: (t, f) => parseIntFlag(f, t, 1) },
  }),
];
