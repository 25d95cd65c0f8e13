/**
 * Gates checked against the lines a run will have, known from its flags, before anything is sent: a gate whose scope
 * matches no line, or whose metric those lines lack, would judge nothing and let a run pass without evidence.
 */
import { UsageError } from "../errors.ts";
import { AXES, isRoundAxes, kindOf, type Axis, type LineAxes, type AxesKind } from "../schema/axes.ts";
import { kindHasMetric } from "./metrics.ts";
import { gateApplies } from "./parse.ts";
import type { Gate } from "../schema/gate.ts";
import { MEASURED_ONLY_WITH, measuredOnlyWithOf, type MeasuredOnlyWith } from "../schema/key-table.ts";

const AXIS_WORDS: Record<Axis, string> = {
  shared_prefix_pct: "pct",
  working_set: "working set",
  request_rate: "request rate",
  window: "window",
  round: "round",
  repeat: "repeat",
  probe: "probe",
};
/** An axis at its default in every planned line is left out of the description unless a gate names it. */
const DEFAULTS: Partial<Record<Axis, number>> = { working_set: 1, request_rate: Infinity };

const show = (v: number): string => (v === Infinity ? "inf" : String(v));

/** "rounds 0..4", "pct 0, 50", "pct 0, 50 x working set 1, 4 x request rate 8, inf". */
export function describePlan(planned: readonly LineAxes[], named: ReadonlySet<Axis> = new Set()): string {
  if (planned.length === 0) return "no line";
  if (planned.every(isRoundAxes)) {
    const rounds = planned.map((a) => a.round);
    return rounds.length === 1 ? `round ${rounds[0]}` : `rounds ${Math.min(...rounds)}..${Math.max(...rounds)}`;
  }
  const parts: string[] = [];
  for (const axis of AXES) {
    const values = [...new Set(planned.map((a) => (a as unknown as Record<string, number | undefined>)[axis]))].filter((v) => v !== undefined);
    if (values.length === 0) continue;
    const atDefault = values.length === 1 && values[0] === DEFAULTS[axis];
    if (atDefault && !named.has(axis)) continue;
    parts.push(`${AXIS_WORDS[axis]} ${values.map(show).join(", ")}`);
  }
  return parts.join(" x ");
}

/** Refuses a gate whose metric a line of this kind does not have (e.g. approximate_turns in a sweep, mean_cached_tokens in multiturn). */
export function checkGateMetrics(gates: readonly Gate[], kind: AxesKind): void {
  for (const gate of gates) {
    if (!kindHasMetric(kind, gate.metric))
      throw new UsageError(`${gate.source}: ${gate.metric} is not a numeric key of a ${kind} line, so it would judge nothing`);
  }
}

/**
 * Refuses (UsageError, exit 2) a gate that would judge no line of the run: its scope matches none of the planned
 * lines' axes, or its metric is not a key of those lines. `planned` is every line the run will have: sweep axes
 * (pct x working set x request rate, axes.ts plannedSweepAxes) or round axes (plannedRoundAxes).
 */
export function checkGatesMatchPlan(gates: readonly Gate[], planned: readonly LineAxes[]): void {
  if (gates.length === 0) return;
  const kinds = new Set(planned.map(kindOf));
  for (const kind of kinds) checkGateMetrics(gates, kind);
  for (const gate of gates) {
    if (planned.some((axes) => gateApplies(gate, axes))) continue;
    const named = new Set(gate.scope.map((c) => c.axis));
    throw new UsageError(`${gate.source}: its scope matches no line of this run, which will have ${describePlan(planned, named)}`);
  }
}

/**
 * Refuses (exit 2, before anything is sent) a gate on a key this run does not measure at all: the key table says what
 * a run must be to measure it (`measuredOnlyWith`: fidelity keys need --check-fidelity, the ledger's several
 * replicas). Such a gate would otherwise fail at run time on no samples; said now, it names what is missing.
 */
export function checkGatesMeasurable(gates: readonly Gate[], run: Readonly<Record<MeasuredOnlyWith, boolean>>): void {
  for (const gate of gates) {
    const needs = measuredOnlyWithOf(gate.metric);
    if (needs !== null && !run[needs]) throw new UsageError(`${gate.source}: ${gate.metric} is measured only with ${MEASURED_ONLY_WITH[needs]} (add it)`);
  }
}
