/** Gates evaluated on one pct's numbers, as the pct ends; the verdicts go into the pct line (`gates`). */
import type { PctRecord } from "../metrics/pct-record.ts";
import { gateApplies, holds, type Gate } from "./parse.ts";

/** One gate's verdict on one pct line, as written in the line's `gates`. */
// The verdict's shape is part of the line format (src/schema).
export type { GateResult } from "../schema/nested.ts";
import type { GateResult } from "../schema/nested.ts";

/** The verdict of every gate that applies to the record's pct, in the order the gates were given. */
export function evaluateGates(gates: readonly Gate[], record: Pick<PctRecord, "shared_prefix_pct"> & Partial<PctRecord>): GateResult[] {
  const results: GateResult[] = [];
  for (const gate of gates) {
    if (!gateApplies(gate, record.shared_prefix_pct)) continue;
    const raw = record[gate.metric];
    const value = typeof raw === "number" ? raw : null;
    // Unmeasured (null) or undefined (NaN) values fail: a gate passes only on evidence.
    results.push({ expr: gate.expr, value, pass: value !== null && !Number.isNaN(value) && holds(value, gate.op, gate.value) });
  }
  return results;
}

/** A failed gate with the pct it failed at. */
export interface GateFailure extends GateResult {
  pct: number;
}

/** Every failed verdict in pct lines, in line order. */
export function gateFailures(lines: ReadonlyArray<{ shared_prefix_pct: number; gates?: readonly GateResult[] }>): GateFailure[] {
  const failures: GateFailure[] = [];
  for (const line of lines) for (const g of line.gates ?? []) if (!g.pass) failures.push({ ...g, pct: line.shared_prefix_pct });
  return failures;
}
