/** Key lists of the JSONL lines, imported by every layer that names keys (gates, compare limits): all derived from key-table.ts. */
import { numericKeysOf, type NumericKeyOf, type SweepRecord } from "./lines.ts";

export type NumericSweepKey = NumericKeyOf<SweepRecord>;

/** Every numeric key of a pct line, in line order: what a gate or a --max-regress limit may name. */
export const NUMERIC_KEYS = numericKeysOf("sweep") as NumericSweepKey[];

/** Whether `name` is a numeric key of a pct line. */
export const isNumericKey = (name: string): name is NumericSweepKey => (NUMERIC_KEYS as readonly string[]).includes(name);
