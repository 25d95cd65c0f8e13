/**
 * Pairs the pct lines of two runs and checks that each pair measured the same work: equal workload fingerprints
 * (`workload` in each line). A difference is named by its first field (causes before consequences).
 */
import { FINGERPRINT_FIELDS, type WorkloadFingerprint } from "../metrics/fingerprint.ts";
import type { PctLine } from "../report/console.ts";

export interface PctPair {
  pct: number;
  base: PctLine;
  next: PctLine;
  /** Fingerprint fields that differ (first is the one to name); "workload" when a line has no fingerprint. */
  differences: string[];
}

export interface Pairing {
  pairs: PctPair[];
  onlyInBase: number[];
  onlyInNew: number[];
}

/** The fields in which two lines' fingerprints differ, in FINGERPRINT_FIELDS order. */
export function fingerprintDifferences(base: PctLine, next: PctLine): string[] {
  const a = base.workload as WorkloadFingerprint | undefined;
  const b = next.workload as WorkloadFingerprint | undefined;
  if (!a || !b) return ["workload"];
  return FINGERPRINT_FIELDS.filter((f) => a[f] !== b[f]);
}

/** Lines of equal pct paired (the last line of a pct when a sweep repeated it). */
export function pairLines(base: readonly PctLine[], next: readonly PctLine[]): Pairing {
  const byPct = (lines: readonly PctLine[]) => new Map(lines.map((l) => [l.shared_prefix_pct, l]));
  const b = byPct(base);
  const n = byPct(next);
  const pairs: PctPair[] = [];
  for (const [pct, line] of n) {
    const partner = b.get(pct);
    if (partner) pairs.push({ pct, base: partner, next: line, differences: fingerprintDifferences(partner, line) });
  }
  pairs.sort((x, y) => x.pct - y.pct);
  return {
    pairs,
    onlyInBase: [...b.keys()].filter((p) => !n.has(p)).sort((x, y) => x - y),
    onlyInNew: [...n.keys()].filter((p) => !b.has(p)).sort((x, y) => x - y),
  };
}

/** One line describing how a pair's fingerprints differ, with both values of the first field. */
export function describeDifference(pair: PctPair): string {
  const [first, ...rest] = pair.differences;
  if (first === undefined) return "";
  if (first === "workload") {
    const which = pair.base.workload ? "NEW" : pair.next.workload ? "BASE" : "neither file";
    return `pct ${pair.pct}: ${which === "neither file" ? "neither line has" : `the ${which} line has no`} workload fingerprint (written before warmbench recorded one, or by the Python script)`;
  }
  const show = (l: PctLine) => {
    const v = (l.workload as unknown as Record<string, unknown>)[first];
    const text = typeof v === "string" ? v : JSON.stringify(v);
    return text.length > 16 ? `${text.slice(0, 12)}…` : text;
  };
  return `pct ${pair.pct}: the workloads differ in ${first} (base ${show(pair.base)}, new ${show(pair.next)})${rest.length ? `; also ${rest.join(", ")}` : ""}`;
}
