/**
 * Where a producer's results go. Producers measure and judge; they never render or write: the command line builds
 * a sink (src/output) and hands it in, so the layers stay engine -> producers -> report -> output -> cli. Each
 * producer extends PointSink with the few events its own output has (a cell's banner, a round table's header,
 * live progress).
 */
import type { CheckedRequest } from "../metrics/replay-check.ts";
import type { SweepLine } from "../metrics/sweep-line.ts";
import type { RoundRecord } from "../schema/lines.ts";
import type { RequestRecord } from "../schema/record.ts";
import type { TraceRequest } from "../workload/trace.ts";
import type { TurnPlan } from "../workload/turn-plan.ts";
import type { DetailLine } from "./request-id.ts";

/** Live progress of one line's requests (on stderr, or nowhere). */
export interface Progress {
  /** A request ended, with the output tokens it got. */
  settled(ok: boolean, outputTokens: number): void;
  /** Ends the display. */
  stop(): void;
}

/** Starts the progress of `total` requests, shown as `label`. */
export type StartProgress = (total: number, label: string) => Progress;

const SILENT: Progress = { settled() {}, stop() {} };

/** No progress (a shard worker's: its stderr is the coordinator's terminal). */
export const noProgress: StartProgress = () => SILENT;

/**
 * --dump-prompts: where a producer's prompts go (the command line's results writer, src/output/results-writer.ts),
 * so that no producer writes a file itself. It takes nothing when the run dumps no prompts.
 */
export interface PromptDump {
  /** Appends whole lines (each ending in a newline), in the order given. */
  prompts(lines: string | Uint8Array): void;
}

/** What every producer's sink takes. */
interface PointSink<Line> {
  /** One measured and judged line: its console row and its results-file line. */
  line(line: Line): void;
}

/** Where the engine sends a sweep line (a sweep's sink, a search's): the line, its requests' details, a finished --repeat series. */
export interface SweepLineSink extends PointSink<SweepLine> {
  /** A line's measured requests (--request-details), before the line itself. */
  details(runId: string, line: DetailLine, records: readonly RequestRecord[]): void;
  /** After a line's last repeat (--repeat): every repeat of it, the last carrying the gates judged on their mean. */
  repeated(repeats: readonly SweepLine[]): void;
}

/** Where the engine sends a replay's lines (a Mooncake trace's, an agentic one's) and its requests' details. */
export interface ReplayLineSink extends PointSink<SweepLine> {
  /** Every measured request with its trace line and its predicted range (--request-details), before the lines. */
  details(
    runId: string,
    records: readonly RequestRecord[],
    requests: readonly TraceRequest[],
    checked: ReadonlyMap<number, CheckedRequest>,
    /** What a request's details add after its trace line (several replicas: where it went and its ledger terms). */
    extra?: (index: number) => Record<string, unknown> | undefined,
  ): void;
}

/** A turn as it ended, as much of it as its details line tells. */
interface EndedTurn {
  plan: Pick<TurnPlan, "client" | "round" | "expectedCachedTokens">;
  rec: RequestRecord;
  /** What the run adds to its details line (several replicas: its replica and ledger terms). */
  extra?: Record<string, unknown>;
}

/** Where the engine sends a multi-turn round's line, its turns' prompts (--dump-prompts) and their details. */
export interface RoundLineSink extends PointSink<RoundRecord>, PromptDump {
  /** A completed round's turns (--request-details), after the round itself. */
  turns(runId: string, turns: readonly EndedTurn[]): void;
}
