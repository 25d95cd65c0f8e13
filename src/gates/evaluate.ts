/**
 * Gates evaluated on one line's numbers, as the line ends; the verdicts go into the line (`gates`). One code path for
 * every kind of line: the scope is matched on the line's axes and the metric is looked up by key.
 */
import { axesLabel, axesOf, type LineAxes } from "../schema/axes.ts";
import type { Gate } from "../schema/gate.ts";
import type { GateResult } from "../schema/nested.ts";
import { judgeEvidence } from "../metrics/evidence-check.ts";
import { gateApplies, holds } from "./parse.ts";

/** The verdict of every gate whose scope holds the line, in the order the gates were given. */
export function evaluateGates(gates: readonly Gate[], line: object): GateResult[] {
  const axes = axesOf(line);
  const results: GateResult[] = [];
  for (const gate of gates) {
    if (!gateApplies(gate, axes)) continue;
    const raw = (line as Record<string, unknown>)[gate.metric];
    const value = typeof raw === "number" ? raw : null;
    // A gate passes only on evidence: the one check says what the line lacks for this metric (no sample, interrupted,
    // a load it did not carry); unmeasured (null), absent or undefined (NaN) values fail too.
    const problems = judgeEvidence("gate", line, gate.metric);
    const pass = problems.length === 0 && value !== null && !Number.isNaN(value) && holds(value, gate.op, gate.value);
    results.push({ expr: gate.expr, value, pass, ...(problems.length > 0 ? { evidence: problems.map((p) => p.text) } : {}) });
  }
  return results;
}

/** A failed gate with the line it failed at. */
export interface GateFailure extends GateResult {
  axes: LineAxes;
  /** The line by its axes: "50%", "90% ws=4 @ 200 req/s", "round 3". */
  line: string;
}

/** Every failed verdict in the lines, in line order. */
export function gateFailures(lines: ReadonlyArray<object & { gates?: readonly GateResult[] }>): GateFailure[] {
  const failures: GateFailure[] = [];
  for (const line of lines) {
    const axes = axesOf(line);
    for (const g of line.gates ?? []) if (!g.pass) failures.push({ ...g, axes, line: axesLabel(axes) });
  }
  return failures;
}
