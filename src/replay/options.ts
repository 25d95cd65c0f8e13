/** What `warmbench replay TRACE` runs with (parsed by src/cli/replay-options.ts; every problem there is exit 2). */
import type { RunOptions } from "../config/options.ts";
import type { TraceOptions } from "./trace.ts";
import type { TraceFormat } from "../workload/agentic/detect.ts";
import type { JoinRule, SpawnRule } from "../workload/agentic/session-plan.ts";
import type { DelayRule } from "../workload/agentic/session-schedule.ts";

/** How an agentic corpus (WEKA, TraceLab) is scheduled: the named rules of src/workload/agentic, each recorded in the line. */
export interface AgenticRules {
  traceFormat: TraceFormat | "auto";
  delay: DelayRule;
  spawn: SpawnRule;
  join: JoinRule;
  /** Idle-gap cap, trace seconds; null: none. */
  maxIdleS: number | null;
  /** Session trees in flight at once; null: one per trace of the corpus. */
  sessions: number | null;
  startAt: { from: number; to: number } | null;
}

export type ReplayOptions = Omit<
  RunOptions,
  "numPrompts" | "totalTokens" | "outputLen" | "pcts" | "workingSets" | "requestRates" | "burstiness" | "durationS" | "workers" | "shard" | "coordinator"
> &
  AgenticRules & {
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
  traceFormat: TraceFormat | "auto";
  spawn: SpawnRule;
  trace: TraceOptions;
  pageSize: number;
  cacheTokens: number | null;
  windowS: number;
  outputFile: string | null;
}
