/**
 * What a multi-turn run hands its results to (built by the command line in src/output): the round table's header,
 * each round as it completes, its turns' details and prompts, and the table's footer.
 */
import type { RoundLineSink } from "../engine/sink.ts";
import type { RoundRecord } from "../schema/lines.ts";

/** The run's shape, as the round table's title shows it. */
type RoundsBanner = Pick<
  RoundRecord,
  | "num_clients"
  | "num_rounds"
  | "shared_system_tokens"
  | "first_turn_tokens"
  | "turn_tokens"
  | "output_len"
  | "round_barrier"
  | "ready_queue_policy"
  | "working_set"
>;

export interface MultiturnSink extends RoundLineSink {
  started(banner: RoundsBanner): void;
  /** After the last round: every round written. */
  ended(rounds: readonly RoundRecord[]): void;
}

/** A shard worker's sink: it shows and writes nothing (the coordinator writes every round from the union). */
export const WORKER_SINK: MultiturnSink = { started() {}, line() {}, turns() {}, prompts() {}, ended() {} };
