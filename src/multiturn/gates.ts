/**
 * --gate / --gates-file on a multi-turn run: every gate is judged on every round line (the verdicts go into the line's
 * `gates`, as a pct line's do). A gate that can judge no round is a usage error before anything is sent: a `@pct`
 * scope (a multi-turn run writes no pct line) or a metric that a round line does not carry.
 */
import { UsageError } from "../errors.ts";
import { evaluateGates, type GateFailure, type GateResult } from "../gates/evaluate.ts";
import type { Gate } from "../gates/parse.ts";
import type { PctRecord } from "../metrics/pct-record.ts";
import { ROUND_KEYS, type RoundRecord } from "../metrics/round-record.ts";

/** Refuses (exit 2) the gates that would match no round line of a run of `numRounds` rounds. */
export function checkRoundGates(gates: readonly Gate[], numRounds: number): void {
  const lines = `round lines 0..${numRounds - 1}`;
  for (const gate of gates) {
    if (gate.scope !== null) {
      throw new UsageError(`--gate "${gate.expr}": multiturn writes ${lines} and no pct line, so its @pct scope matches no line; drop the scope to judge every round`);
    }
    if (!(ROUND_KEYS as readonly string[]).includes(gate.metric)) {
      throw new UsageError(`--gate "${gate.expr}": ${gate.metric} is not a key of a round line (${lines}), so it would judge nothing`);
    }
  }
}

/**
 * The verdict of every gate on one round line, in the order given; an unmeasured (null) value fails. The pct line's
 * evaluator does it: checkRoundGates refused every scope, so no gate reads the pct it is handed.
 */
export function evaluateRoundGates(gates: readonly Gate[], record: RoundRecord): GateResult[] {
  return evaluateGates(gates, { ...(record as unknown as Partial<PctRecord>), shared_prefix_pct: Number.NaN });
}

/** Every failed verdict of the rounds, in round order (`pct` holds the round: GateFailure names the line so). */
export function roundGateFailures(rounds: ReadonlyArray<Pick<RoundRecord, "round" | "gates">>): GateFailure[] {
  const failures: GateFailure[] = [];
  for (const r of rounds) for (const g of r.gates) if (!g.pass) failures.push({ ...g, pct: r.round });
  return failures;
}
