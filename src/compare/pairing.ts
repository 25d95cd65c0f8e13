/**
 * Pairs the lines of two runs by their axes (a sweep's pct x working set x rate, a multi-turn run's round) and checks
 * that each pair measured the same work: equal workload fingerprints (`workload` in each sweep line), or for round lines
 * without one, equal conversation shapes; and the same routing over the same number of replicas. A difference is named
 * by its first field (causes before consequences).
 */
import { FINGERPRINT_FIELDS } from "../metrics/fingerprint.ts";
import type { WorkloadFingerprint } from "../schema/nested.ts";
import { axesOf, isRoundAxes, labelOf, type LineAxes } from "../schema/axes.ts";
import type { LineKind } from "../schema/key-table.ts";
import { field, lineKindOf, type CompareLine } from "./lines.ts";

export interface LinePair<L extends CompareLine = CompareLine> {
  /** The sweep line's pct; null for a round line. */
  pct: number | null;
  /** The line by its axes (schema/axes.ts): "50%", "50% ws=4 @ 8 req/s", "round 3". */
  label: string;
  base: L;
  next: L;
  /** Fields that differ (first is the one to name); "workload" when a line has no fingerprint. */
  differences: string[];
}

export interface Pairing<L extends CompareLine = CompareLine> {
  pairs: LinePair<L>[];
  /** Labels of the lines with no partner. */
  onlyInBase: string[];
  onlyInNew: string[];
}

/** What a multi-turn run's rounds must share to be compared (its lines carry no workload fingerprint). */
export const ROUND_SHAPE = [
  "backend",
  "tokenizer",
  "num_clients",
  "num_rounds",
  "shared_system_tokens",
  "first_turn_tokens",
  "turn_tokens",
  "output_len",
  "max_concurrency",
  "round_barrier",
  "seed",
] as const;

/**
 * What two capacity searches must share to be compared (their lines carry no fingerprint: their probes do): the
 * workload, and the gates that define the capacity (a search at p99 TTFT <= 190 ms and one that also allows failures
 * measured two different things).
 */
const CAPACITY_SHAPE = ["search", "backend", "model", "total_tokens", "output_len", "working_set", "burstiness", "seed", "search_gates"] as const;

/** A shape field as compared: gates as a set (their order is how they were written, not what they judge). */
function shapeValue(l: CompareLine, key: string): unknown {
  const v = field(l, key);
  return Array.isArray(v) ? JSON.stringify([...v].map(String).sort()) : v;
}

/** The shape fields of the kinds of line that carry no workload fingerprint. */
const SHAPES: Partial<Record<LineKind, readonly string[]>> = { round: ROUND_SHAPE, capacity: CAPACITY_SHAPE };

/** A sort key: rounds in order; sweep cells by pct, then working set, then rate (a closed loop last). */
function order(a: LineAxes, b: LineAxes): number {
  if (isRoundAxes(a) || isRoundAxes(b)) return (isRoundAxes(a) ? a.round : -1) - (isRoundAxes(b) ? b.round : -1);
  return a.shared_prefix_pct - b.shared_prefix_pct || a.working_set - b.working_set || a.request_rate - b.request_rate;
}
const lineOrder = (a: CompareLine, b: CompareLine): number => order(axesOf(a), axesOf(b));

/**
 * Where the requests went, which the workload does not say: how they were routed ("one server" when the line has no
 * `route`) and over how many replicas. A routed run and a one-server run measured different setups.
 */
const ROUTING_FIELDS = {
  route: (l: CompareLine): unknown => field(l, "route") ?? "one server",
  replicas: (l: CompareLine): unknown => {
    const replicas = field(l, "replicas") as unknown[] | null | undefined;
    return replicas === undefined ? 1 : replicas === null ? "unknown (merged runs)" : replicas.length;
  },
} as const;
const routingDifferences = (base: CompareLine, next: CompareLine): string[] =>
  Object.entries(ROUTING_FIELDS)
    .filter(([, of]) => of(base) !== of(next))
    .map(([name]) => name);

/**
 * The fields in which two lines' workloads differ: fingerprint fields in FINGERPRINT_FIELDS order, or their kind's
 * shape fields; then the routing fields.
 */
function fingerprintDifferences(base: CompareLine, next: CompareLine): string[] {
  const a = field(base, "workload") as WorkloadFingerprint | undefined;
  const b = field(next, "workload") as WorkloadFingerprint | undefined;
  if (a && b) return [...FINGERPRINT_FIELDS.filter((f) => a[f] !== b[f]), ...routingDifferences(base, next)];
  const shape = SHAPES[lineKindOf(base)];
  if (!a && !b && shape !== undefined && lineKindOf(next) === lineKindOf(base)) {
    return [...shape.filter((k) => shapeValue(base, k) !== shapeValue(next, k)), ...routingDifferences(base, next)];
  }
  return ["workload"];
}

/** Lines at the same axes paired (the last one of a cell when a sweep repeated it). */
export function pairLines<L extends CompareLine>(base: readonly L[], next: readonly L[]): Pairing<L> {
  const byCell = (lines: readonly L[]) => new Map([...lines].sort(lineOrder).map((l) => [labelOf(l), l]));
  const b = byCell(base);
  const n = byCell(next);
  const pairs: LinePair<L>[] = [];
  for (const [label, line] of n) {
    const partner = b.get(label);
    if (!partner) continue;
    const axes = axesOf(line);
    pairs.push({
      pct: isRoundAxes(axes) ? null : axes.shared_prefix_pct,
      label,
      base: partner,
      next: line,
      differences: fingerprintDifferences(partner, line),
    });
  }
  pairs.sort((x, y) => lineOrder(x.next, y.next));
  return {
    pairs,
    onlyInBase: [...b.keys()].filter((k) => !n.has(k)),
    onlyInNew: [...n.keys()].filter((k) => !b.has(k)),
  };
}

/** One line describing how a pair's workloads differ, with both values of the first field. */
export function describeDifference(pair: LinePair): string {
  const [first, ...rest] = pair.differences;
  if (first === undefined) return "";
  if (first === "workload") {
    const which = field(pair.base, "workload") ? "NEW" : field(pair.next, "workload") ? "BASE" : "neither file";
    return `${pair.label}: ${which === "neither file" ? "neither line has" : `the ${which} line has no`} workload fingerprint (written before warmbench recorded one, or by the Python script)`;
  }
  const show = (l: CompareLine) => {
    const w = field(l, "workload") as Record<string, unknown> | undefined;
    const v = first in ROUTING_FIELDS ? ROUTING_FIELDS[first as keyof typeof ROUTING_FIELDS](l) : w ? w[first] : field(l, first);
    const text = typeof v === "string" ? v : v === undefined ? "absent" : JSON.stringify(v);
    // Gates are shown whole: they are what a reader must see differ.
    return text.length > 16 && !Array.isArray(v) ? `${text.slice(0, 12)}…` : text;
  };
  if (first === "search_gates") {
    return `${pair.label}: the capacity searches were judged by different gates, so their capacities hold at different SLOs (base ${show(pair.base)}, new ${show(pair.next)})${rest.length ? `; also ${rest.join(", ")}` : ""}`;
  }
  return `${pair.label}: the workloads differ in ${first} (base ${show(pair.base)}, new ${show(pair.next)})${rest.length ? `; also ${rest.join(", ")}` : ""}`;
}
