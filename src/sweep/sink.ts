/**
 * What a sweep hands its results to (built by the command line in src/output): the banner of each line, the
 * line itself, its requests' details and prompts, live progress, and the end of the sweep.
 */
import { noProgress, type PromptDump, type StartProgress, type SweepLineSink } from "../engine/sink.ts";
import type { SweepLine } from "../metrics/sweep-line.ts";
import type { TtftModel } from "../metrics/ttft-model.ts";

/** A line's banner: the script's, once per line, before its reset. */
type LineBanner = Pick<SweepLine, "shared_prefix_pct" | "prefix_len" | "suffix_len" | "working_set">;

export interface SweepSink extends SweepLineSink, PromptDump {
  lineStarted(banner: LineBanner): void;
  /** Live progress of a line's requests. */
  progress: StartProgress;
  /** After the last line (none, when the first was interrupted): the sweep's TTFT model over every line. */
  ended(records: readonly SweepLine[], ttftModel: TtftModel | null): void;
}

/** A shard worker's sink: it shows and writes nothing (the coordinator writes every line from the union). */
export const WORKER_SINK: SweepSink = { lineStarted() {}, line() {}, details() {}, prompts() {}, repeated() {}, ended() {}, progress: noProgress };
