/** What `warmbench replay TRACE` runs with (parsed by src/cli/replay-options.ts; every problem there is exit 2). */
import type { RunOptions } from "../config/options.ts";
import type { TraceOptions } from "./trace.ts";

export type ReplayOptions = Omit<
  RunOptions,
  | "numPrompts"
  | "totalTokens"
  | "outputLen"
  | "pcts"
  | "workingSets"
  | "requestRates"
  | "burstiness"
  | "durationS"
  | "gates"
  | "workers"
  | "shard"
  | "coordinator"
> & {
  tracePath: string;
  trace: TraceOptions;
  /** Scales the trace's timestamps: 0.1 sends ten times faster. */
  timeScale: number;
  /** Closed loop in trace order, --max-concurrency at once. */
  ignoreTimestamps: boolean;
  windowS: number;
  /** Cache capacity for the LRU model; null: the server's (/server_info), or none. */
  cacheTokens: number | null;
};

/** `replay --analyze`: the trace alone. */
export interface AnalyzeOptions {
  tracePath: string;
  trace: TraceOptions;
  pageSize: number;
  cacheTokens: number | null;
  windowS: number;
  outputFile: string | null;
}
