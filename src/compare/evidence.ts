/**
 * What compare fails on besides a slower number, as the one evidence check (metrics/evidence-check.ts) finds it: NEW
 * lost a line BASE had, failed more requests, lost a cache proof BASE had, measured itself (its client saturated:
 * "untrustworthy", not "slower"), was interrupted, did not carry its offered load, has no sample of a judged metric,
 * or is the same run as BASE. A candidate must not pass on missing evidence.
 */
import { pairProblems, runIdsOf, type Defect, type JudgedMetric } from "../metrics/evidence-check.ts";
import { field, type CompareLine } from "./lines.ts";
import type { LinePair } from "./pairing.ts";

export interface Finding {
  /** The line by its axes, as in the table ("" for the runs as a whole). */
  label: string;
  kind: Defect;
  /** One line for the console and the log. */
  text: string;
}

/** The findings on one pair, in a fixed order; `metrics` are the ones judged (named: given by the user). */
export function pairFindings(pair: LinePair, metrics: readonly { metric: JudgedMetric; named: boolean }[]): Finding[] {
  return pairProblems(pair.base, pair.next, metrics).map((p) => ({
    label: pair.label,
    kind: p.defect,
    text: p.defect === "client_saturated" ? untrustworthy(pair) : `${pair.label}: ${p.text}`,
  }));
}

function untrustworthy(pair: LinePair): string {
  const num = (key: string) => (typeof field(pair.next, key) === "number" ? (field(pair.next, key) as number) : null);
  const lag = num("client_loop_lag_p99_ms");
  const cpu = num("client_cpu_pct");
  const why = [lag !== null ? `loop lag p99 ${lag.toFixed(1)} ms` : "", cpu !== null ? `CPU ${cpu.toFixed(0)}%` : ""].filter(Boolean).join(", ");
  return `NEW at ${pair.label} is untrustworthy: its client saturated${why ? ` (${why})` : ""}, so its latencies may be the client's own delay; rerun with more client headroom (--workers)`;
}

/**
 * A capacity line carries no `failed`: what its search lost is in the evidence of the probe that set it. A NEW
 * whose capacity rests on a probe that lost more requests than BASE's did fails as more_failures, as a point would.
 */
export function capacityFailureFindings(pair: LinePair): Finding[] {
  if (field(pair.next, "type") !== "capacity") return [];
  const lost = (l: CompareLine): { sent: number; lost: number } | null => {
    const r = (field(l, "evidence") as { requests?: { sent: number; finished: number } } | undefined)?.requests;
    return r === undefined ? null : { sent: r.sent, lost: r.sent - r.finished };
  };
  const [b, n] = [lost(pair.base), lost(pair.next)];
  if (n === null || n.lost <= (b?.lost ?? 0)) return [];
  return [
    {
      label: pair.label,
      kind: "more_failures",
      text: `${pair.label}: more_failures: the probe that set NEW's capacity lost ${n.lost} of ${n.sent} requests (BASE's ${b === null ? "n/a" : `${b.lost} of ${b.sent}`}; any increase fails)`,
    },
  ];
}

/** Lines of BASE with no partner in NEW: each a finding unless --allow-missing accepts them. */
export const missingFindings = (onlyInBase: readonly string[]): Finding[] =>
  onlyInBase.map((label) => ({
    label,
    kind: "line_missing",
    text: `${label}: in BASE, missing from NEW (did the candidate stop early? --allow-missing accepts it)`,
  }));

/** BASE and NEW share a run: the candidate would be judged against itself. */
export function sameRunFindings(base: readonly CompareLine[], next: readonly CompareLine[]): Finding[] {
  const baseRuns = new Set(base.flatMap((l) => runIdsOf(l)));
  const shared = [...new Set(next.flatMap((l) => runIdsOf(l)))].filter((id) => baseRuns.has(id));
  return shared.map((id) => ({
    label: "",
    kind: "same_run_twice",
    text: `same_run_twice: run ${id} is in BASE and in NEW (a candidate judged against itself proves nothing)`,
  }));
}
