/**
 * What a gate may name: a numeric key of a pct line or of a round line. Latency, throughput and count keys mean the
 * same in both (the same src/metrics code computes them); some exist in one kind only (request_rate, mean_cached_tokens
 * in pct lines; round, clients_in_round, approximate_turns in round lines).
 */
import { isNumericKey, type NumericPctKey } from "../schema/keys.ts";
import { ROUND_KEYS, type RoundRecord } from "../metrics/round-record.ts";
import type { LineKind } from "../schema/axes.ts";

type NumericRoundKey = { [K in keyof RoundRecord]-?: [RoundRecord[K]] extends [number | null] ? K : never }[keyof RoundRecord];

/** Numeric keys of a round line that a pct line does not have. */
const ROUND_ONLY = [
  "round", "num_rounds", "num_clients", "clients_in_round", "shared_system_tokens", "first_turn_tokens", "turn_tokens",
  "mean_prompt_len", "max_prompt_len", "observed_cached_tokens", "approximate_turns",
] as const satisfies ReadonlyArray<NumericRoundKey>;

const isRoundOnly = (k: string): boolean => (ROUND_ONLY as readonly string[]).includes(k);

/** Every numeric key of a round line, in line order. */
export const ROUND_NUMERIC_KEYS = ROUND_KEYS.filter((k) => isNumericKey(k) || isRoundOnly(k)) as NumericRoundKey[];

// Compile-time proof that the runtime list is exactly the numeric keys of RoundRecord: a numeric key added to a round
// line, or a pct-numeric key that is not numeric in a round line, fails the build here.
type Listed = Extract<(typeof ROUND_KEYS)[number], NumericPctKey | (typeof ROUND_ONLY)[number]>;
type Unlisted = Exclude<NumericRoundKey, Listed>;
type NotNumeric = Exclude<Listed, NumericRoundKey>;
const exact: [Unlisted | NotNumeric] extends [never] ? true : Unlisted | NotNumeric = true;
void exact;

export type GateMetric = NumericPctKey | NumericRoundKey;

export const isRoundNumericKey = (name: string): boolean => (ROUND_NUMERIC_KEYS as readonly string[]).includes(name);
export const isGateMetric = (name: string): name is GateMetric => isNumericKey(name) || isRoundNumericKey(name);

/** Whether a line of that kind has the metric. */
export const kindHasMetric = (kind: LineKind, name: string): boolean => (kind === "round" ? isRoundNumericKey(name) : isNumericKey(name));
