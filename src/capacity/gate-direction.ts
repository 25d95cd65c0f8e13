/**
 * A search assumes that a gate which holds at a load holds at every lower one, and that enough load breaks it. That
 * is true of an upper bound on something that grows with load (a latency, the failures, the requests in flight) and
 * of nothing else: a floor on a throughput fails at low load and passes at high, and a cache or workload key does not
 * move with load at all. Such a gate would make the search's answer meaningless, so it is refused with the reason.
 */
import { UsageError } from "../errors.ts";
import type { Gate } from "../schema/gate.ts";

/** Keys that grow with the offered load, whether it is a rate or a concurrency. */
const RISES = [
  /^(mean|median|std|p90|p99)_(ttft|tpot|itl|e2e_latency)_ms$/,
  /^(ttft|e2e)_from_intended_(mean|median|p90|p99)_ms$/,
  /^schedule_lag_(mean|median|p90|p99)_ms$/,
  /^(failed|concurrency)$/,
];
const THROUGHPUT = /_throughput(_retokenized)?$|^achieved_request_rate$/;

const risesWithLoad = (metric: string): boolean => RISES.some((re) => re.test(metric));

/** Why the gate cannot bound a capacity, or null when it can. */
function gateDirectionProblem(gate: Gate): string | null {
  const m = gate.metric;
  if (risesWithLoad(m)) {
    if (gate.op === "<" || gate.op === "<=" || (gate.op === "==" && gate.value === 0)) return null;
    return `${m} grows with load, so only an upper bound (${m}<=X, or ==0 for a count) marks where the load becomes too much`;
  }
  if (THROUGHPUT.test(m)) {
    return `${m} grows with load, so a bound on it passes at high load and fails at low: it does not bound a capacity (use --require on the capacity instead)`;
  }
  return `${m} does not depend on the load the search varies (a latency, failed or concurrency does), so it cannot mark where the load becomes too much`;
}

/** Refuses (exit 2) a search without a gate, or with one that cannot bound a capacity. */
export function checkSearchGates(gates: readonly Gate[]): void {
  if (gates.length === 0) {
    throw new UsageError(
      "capacity: give at least one --gate (or --gates-file), e.g. --gate 'ttft_from_intended_p99_ms<=500': the capacity is the highest load at which every gate holds",
    );
  }
  for (const gate of gates) {
    const why = gateDirectionProblem(gate);
    if (why !== null) throw new UsageError(`${gate.source}: ${why}`);
    const scoped = gate.scope.find((c) => c.axis !== "shared_prefix_pct" && c.axis !== "working_set");
    if (scoped !== undefined) throw new UsageError(`${gate.source}: @${scoped.axis} is set by the search, so a gate cannot be scoped by it (scope by @pct)`);
  }
}
