/** What `warmbench replay TRACE` runs with (parsed by src/cli/replay-options.ts; every problem there is exit 2). */
import type { RelatedFields, TargetFields } from "../config/options.ts";
import type { DeclaredFields } from "../config/flags/declared-fields.ts";
import type { ClientDecl } from "../config/flags/index.ts";
import type { TraceOptions } from "../workload/trace.ts";
import type { TraceFormat } from "../workload/agentic/detect.ts";
import type { SpawnRule } from "../workload/agentic/session-plan.ts";

/**
 * Replay's declarations' fields (the trace's slice gathered in `trace`), the server target's, and what several flags
 * make (no shards: a replay is one process).
 */
export interface ReplayOptions
  extends Omit<DeclaredFields<ClientDecl, "replay">, TraceFields | "numPrompts">,
    TargetFields,
    Omit<RelatedFields, "workers" | "shard" | "coordinator"> {
  tracePath: string;
  trace: TraceOptions;
}

/** The trace flags' fields, which a replay's options hold as its `trace`. */
type TraceFields = "blockSize" | "skipInvalid" | "startS" | "durationS";

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
