/**
 * What a gate may name: a numeric key of a pct line or of a round line. Latency, throughput and count keys mean the
 * same in both (the same src/metrics code computes them); some exist in one kind only (request_rate, mean_cached_tokens
 * in pct lines; round, clients_in_round, approximate_turns in round lines). Both lists come from the key table.
 */
import { isNumericKey, type NumericSweepKey } from "../schema/keys.ts";
import { numericKeysOf, type NumericKeyOf, type RoundRecord } from "../schema/lines.ts";
import type { AxesKind } from "../schema/axes.ts";

type NumericRoundKey = NumericKeyOf<RoundRecord>;

/** Every numeric key of a round line, in line order. */
export const ROUND_NUMERIC_KEYS = numericKeysOf("round") as NumericRoundKey[];

export type GateMetric = NumericSweepKey | NumericRoundKey;

const isRoundNumericKey = (name: string): boolean => (ROUND_NUMERIC_KEYS as readonly string[]).includes(name);
export const isGateMetric = (name: string): name is GateMetric => isNumericKey(name) || isRoundNumericKey(name);

/** Whether a line of that kind has the metric. */
export const kindHasMetric = (kind: AxesKind, name: string): boolean => (kind === "round" ? isRoundNumericKey(name) : isNumericKey(name));
