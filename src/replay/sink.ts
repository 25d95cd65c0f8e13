/** Where a replay's results go (built by the command line, src/cli/replay-sink.ts): its lines, its requests, progress. */
import type { PointSink, StartProgress } from "../engine/sink.ts";
import type { PctRecord } from "../metrics/pct-record.ts";
import type { RequestRecord } from "../schema/record.ts";
import type { CheckedRequest } from "./check.ts";
import type { TraceRequest } from "./trace.ts";

export interface ReplaySink extends PointSink<PctRecord> {
  /** Every measured request with its trace line and its predicted range (--request-details), before the lines. */
  details(runId: string, records: readonly RequestRecord[], requests: readonly TraceRequest[], checked: ReadonlyMap<number, CheckedRequest>): void;
  progress: StartProgress;
}
