/** Gates as parsed from --gate / --gates-file, and a gate's verdict as written in a line's `gates`. */
import type { NumericPctKey } from "./keys.ts";

export const GATE_OPS = ["<=", ">=", "==", "!=", "<", ">"] as const;

export type GateOp = (typeof GATE_OPS)[number];

/** A parsed gate. */
export interface Gate {
  /** As written, without spaces: what the console and the JSONL show. */
  expr: string;
  metric: NumericPctKey;
  op: GateOp;
  value: number;
  /** Which pcts it applies to; null: every pct. */
  scope: { op: GateOp; pct: number } | null;
}

/** One gate's verdict on one pct line, as written in the line's `gates`. */
export interface GateResult {
  expr: string;
  /** The metric's value in this line; null when it could not be measured (a gate on it then fails). */
  value: number | null;
  pass: boolean;
}
