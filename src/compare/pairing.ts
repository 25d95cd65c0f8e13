/**
 * Pairs the pct lines of two runs and checks that each pair measured the same work: equal workload fingerprints
 * (`workload` in each line). A difference is named by its first field (causes before consequences).
 */
import { FINGERPRINT_FIELDS, type WorkloadFingerprint } from "../metrics/fingerprint.ts";
import type { PctLine } from "../metrics/pct-record.ts";
import { lineLabel } from "../report/line-label.ts";

export interface PctPair {
  pct: number;
  /** The line's cell (line-label.ts): "50%", with the working set and the request rate where the run set them. */
  label: string;
  base: PctLine;
  next: PctLine;
  /** Fingerprint fields that differ (first is the one to name); "workload" when a line has no fingerprint. */
  differences: string[];
}

export interface Pairing {
  pairs: PctPair[];
  /** Labels of the lines with no partner. */
  onlyInBase: string[];
  onlyInNew: string[];
}

/** Sorts cells by pct, then working set, then rate (a closed loop last). */
function cellOrder(a: PctLine, b: PctLine): number {
  const rate = (l: PctLine) => (Number.isFinite(l.request_rate) ? l.request_rate : Infinity);
  return a.shared_prefix_pct - b.shared_prefix_pct || (a.working_set ?? 1) - (b.working_set ?? 1) || rate(a) - rate(b);
}

/** The fields in which two lines' fingerprints differ, in FINGERPRINT_FIELDS order. */
export function fingerprintDifferences(base: PctLine, next: PctLine): string[] {
  const a = base.workload as WorkloadFingerprint | undefined;
  const b = next.workload as WorkloadFingerprint | undefined;
  if (!a || !b) return ["workload"];
  return FINGERPRINT_FIELDS.filter((f) => a[f] !== b[f]);
}

/** Lines of the same cell (pct, working set, request rate) paired (the last one of a cell when a sweep repeated it). */
export function pairLines(base: readonly PctLine[], next: readonly PctLine[]): Pairing {
  const byCell = (lines: readonly PctLine[]) => new Map([...lines].sort(cellOrder).map((l) => [lineLabel(l), l]));
  const b = byCell(base);
  const n = byCell(next);
  const pairs: PctPair[] = [];
  for (const [label, line] of n) {
    const partner = b.get(label);
    if (partner) pairs.push({ pct: line.shared_prefix_pct, label, base: partner, next: line, differences: fingerprintDifferences(partner, line) });
  }
  pairs.sort((x, y) => cellOrder(x.next, y.next));
  return {
    pairs,
    onlyInBase: [...b.keys()].filter((k) => !n.has(k)),
    onlyInNew: [...n.keys()].filter((k) => !b.has(k)),
  };
}

/** One line describing how a pair's fingerprints differ, with both values of the first field. */
export function describeDifference(pair: PctPair): string {
  const [first, ...rest] = pair.differences;
  if (first === undefined) return "";
  if (first === "workload") {
    const which = pair.base.workload ? "NEW" : pair.next.workload ? "BASE" : "neither file";
    return `${pair.label}: ${which === "neither file" ? "neither line has" : `the ${which} line has no`} workload fingerprint (written before warmbench recorded one, or by the Python script)`;
  }
  const show = (l: PctLine) => {
    const v = (l.workload as unknown as Record<string, unknown>)[first];
    const text = typeof v === "string" ? v : JSON.stringify(v);
    return text.length > 16 ? `${text.slice(0, 12)}…` : text;
  };
  return `${pair.label}: the workloads differ in ${first} (base ${show(pair.base)}, new ${show(pair.next)})${rest.length ? `; also ${rest.join(", ")}` : ""}`;
}
