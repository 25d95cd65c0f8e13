/**
 * What a multi-turn run hands its results to (built by the command line in src/output): the round table's header,
 * each round as it completes, its turns' details and prompts, and the table's footer.
 */
import type { PointSink, PromptDump } from "../engine/sink.ts";
import type { RoundRecord } from "../schema/lines.ts";
import type { RequestRecord } from "../schema/record.ts";
import type { TurnPlan } from "./conversation.ts";

/** A turn as it ended, as much of it as its details line tells. */
interface EndedTurn {
  plan: Pick<TurnPlan, "client" | "round" | "expectedCachedTokens">;
  rec: RequestRecord;
  /** What the run adds to its details line (several replicas: its replica and ledger terms). */
  extra?: Record<string, unknown>;
}

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

export interface MultiturnSink extends PointSink<RoundRecord>, PromptDump {
  started(banner: RoundsBanner): void;
  /** A completed round's turns (--request-details), after the round itself. */
  turns(runId: string, turns: readonly EndedTurn[]): void;
  /** After the last round: every round written. */
  ended(rounds: readonly RoundRecord[]): void;
}

/** A shard worker's sink: it shows and writes nothing (the coordinator writes every round from the union). */
export const WORKER_SINK: MultiturnSink = { started() {}, line() {}, turns() {}, prompts() {}, ended() {} };
