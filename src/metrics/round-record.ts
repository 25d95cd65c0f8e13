/**
 * The typed record of a multi-turn round: what the console's round table prints and what the JSONL round line holds,
 * key for key in the order of src/schema/lines.ts (the Point model: a round line is a point whose axes are `round`
 * and `working_set`). A round is the turn of every client with that index (with --round-barrier they run together;
 * without, they overlap with their neighbours). Latency keys mean what they mean in a sweep line (the same
 * src/metrics code computes them); cache keys are sums over the round's turns.
 */
import { orderLine, ROUND_KEYS, type RoundRecord } from "../schema/lines.ts";

export { ROUND_KEYS, type RoundRecord };

/** The record with its keys in the pinned order, schema_version set (an absent `run` skipped). */
export function buildRoundRecord(fields: Omit<RoundRecord, "schema_version">): RoundRecord {
  return orderLine("round", fields) as RoundRecord;
}
