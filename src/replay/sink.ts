/** Where a replay's results go (built by the command line, src/output/replay-sink.ts): its lines, its requests and prompts, progress. */
import type { PointSink, PromptDump, StartProgress } from "../engine/sink.ts";
import type { SweepLine } from "../metrics/sweep-line.ts";
import type { RequestRecord } from "../schema/record.ts";
import type { CheckedRequest } from "./check.ts";
import type { TraceRequest } from "./trace.ts";

export interface ReplaySink extends PointSink<SweepLine>, PromptDump {
  /** Every measured request with its trace line and its predicted range (--request-details), before the lines. */
  details(
    runId: string,
    records: readonly RequestRecord[],
    requests: readonly TraceRequest[],
    checked: ReadonlyMap<number, CheckedRequest>,
    /** Several replicas: where each request went and its ledger terms. */
    extra?: (index: number) => Record<string, unknown> | undefined,
  ): void;
  progress: StartProgress;
}
