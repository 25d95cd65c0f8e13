/** Gates as parsed from --gate / --gates-file, and a gate's verdict as written in a line's `gates`. */
import type { Axis } from "./axes.ts";

export const GATE_OPS = ["<=", ">=", "==", "!=", "<", ">"] as const;

export type GateOp = (typeof GATE_OPS)[number];

/** One `@AXIS OP N` of a gate. */
export interface ScopeClause {
  axis: Axis;
  op: GateOp;
  value: number;
}

/** A parsed gate. */
export interface Gate {
  /** As written, without spaces: what the console and the JSONL show. */
  expr: string;
  /** A numeric key of the lines it judges (checked by src/gates/metrics.ts when parsed). */
  metric: string;
  op: GateOp;
  value: number;
  /** Which lines it applies to: every clause holds; empty: every line. */
  scope: ScopeClause[];
  /** Where it was given, for messages: `--gate "expr"`, `--gates-file f.txt line 3 "expr"`. */
  source: string;
}

// Their shapes are part of the line format: declared once, with the schema's descriptions, in nested.ts.
