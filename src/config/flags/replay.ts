/** The flags only `warmbench replay TRACE` takes (the ones it shares with run are declared in measure.ts). */
import { parseIntFlag, parseNumberFlag, parsePositive } from "../flag-values.ts";
import { bindField } from "./binding.ts";
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
type More = Partial<Omit<FlagDecl, "name" | "type" | "help" | "commands">>;
const text = <const M extends More = Record<never, never>>(name: string, help: string, more: M = {} as M) => ({
  name,
  type: "string" as const,
  help,
  commands: replay,
  ...more,
});
const bool = <const M extends More = Record<never, never>>(name: string, help: string, more: M = {} as M) => ({
  name,
  type: "boolean" as const,
  help,
  commands: replay,
  ...more,
});

const DECLS = [
  {
    name: "trace",
    type: "positional" as const,
    help: "Mooncake-format JSONL trace: one {timestamp, input_length, output_length, hash_ids} per line",
    commands: replay,
  },
  bool("analyze", "Describe the trace without a server: lengths, the hit ratio of an infinite cache, the working set per --window against --cache-tokens"),
  text("block-size", "Tokens per hash id of the trace (Mooncake's FAST'25 release: 512; others use 16 or 64)", {
    default: r.blockSize,
    bind: bindField("blockSize", (t, f) => parseIntFlag(f, t, 1)),
  }),
  bool(
    "skip-invalid",
    "Drop (and count) trace lines that are malformed, do not fit --block-size, go back in time or exceed the model's context, instead of exit 2",
    { bind: bindField.raw("skipInvalid", (raw) => raw["skip-invalid"] === true) },
  ),
  text("start", "Replay from this trace second on", { default: 0, bind: bindField("startS", (t, f) => parseNumberFlag(f, t, 0)) }),
  text("time-scale", "Multiply the trace's timestamps: 0.1 sends ten times faster", {
    default: r.timeScale,
    bind: bindField("timeScale", (t, f) => parsePositive(f, t, "a scale, e.g. 0.1", false)),
  }),
  bool("ignore-timestamps", "Closed loop in trace order: the next request as soon as one of --max-concurrency slots is free", {
    bind: bindField.raw("ignoreTimestamps", (raw) => raw["ignore-timestamps"] === true),
  }),
  text("window", "Trace seconds per window line (axis window)", {
    default: r.windowS,
    bind: bindField("windowS", (t, f) => parsePositive(f, t, "a number of seconds", false)),
  }),
  text("cache-tokens", "Cache capacity for the LRU model of evictions (default: the server's, from /server_info; --analyze: none)", {
    bind: bindField("cacheTokens", (t, f) => parseIntFlag(f, t, 1)),
  }),
] as const;

export const REPLAY_FLAGS: readonly FlagDecl[] = DECLS;

/** The declarations as written (their bindings' fields, and the parsers' types), for the types of the options they fill. */
export type ReplayDecl = (typeof DECLS)[number];
