/**
 * What compare fails on besides a slower number: NEW lost a line BASE had, failed more requests, lost a cache proof
 * BASE had (cache_check ok, flush_verified), or measured itself (its client saturated: "untrustworthy", not "slower").
 * A candidate must not pass on missing evidence.
 */
import { field, type CompareLine } from "./lines.ts";
import type { LinePair } from "./pairing.ts";

export interface Finding {
  /** The line by its axes, as in the table. */
  label: string;
  kind: "missing" | "failed" | "cache_check" | "flush_verified" | "untrustworthy";
  /** One line for the console and the log. */
  text: string;
}

const count = (l: CompareLine, key: string): number | null => {
  const v = field(l, key);
  return typeof v === "number" ? v : null;
};

/** The findings on one pair, in a fixed order. */
export function pairFindings(pair: LinePair): Finding[] {
  const out: Finding[] = [];
  const { label, base, next } = pair;
  const failedBase = count(base, "failed");
  const failedNew = count(next, "failed");
  // A BASE without the key (the script's files) counts as none failed: any failure in NEW is then an increase.
  if (failedNew !== null && failedNew > (failedBase ?? 0)) {
    out.push({ label, kind: "failed", text: `failed at ${label}: ${failedBase ?? "n/a"} in BASE, ${failedNew} in NEW (any increase fails)` });
  }
  const checkBase = field(base, "cache_check");
  const checkNew = field(next, "cache_check");
  if (checkBase === "ok" && checkNew !== "ok") {
    out.push({ label, kind: "cache_check", text: `cache_check at ${label}: ok in BASE, ${String(checkNew ?? "absent")} in NEW (the cache was no longer proven)` });
  }
  if (field(base, "flush_verified") === true && field(next, "flush_verified") !== true) {
    const v = field(next, "flush_verified");
    out.push({ label, kind: "flush_verified", text: `flush_verified at ${label}: true in BASE, ${v === undefined ? "absent" : String(v)} in NEW (the flush was not proven)` });
  }
  if (field(next, "client_saturated") === true) {
    const lag = count(next, "client_loop_lag_p99_ms");
    const cpu = count(next, "client_cpu_pct");
    const why = [lag !== null ? `loop lag p99 ${lag.toFixed(1)} ms` : "", cpu !== null ? `CPU ${cpu.toFixed(0)}%` : ""].filter(Boolean).join(", ");
    out.push({
      label, kind: "untrustworthy",
      text: `NEW at ${label} is untrustworthy: its client saturated${why ? ` (${why})` : ""}, so its latencies may be the client's own delay; rerun with more client headroom (--workers)`,
    });
  }
  return out;
}

/** Lines of BASE with no partner in NEW: each a finding unless --allow-missing accepts them. */
export const missingFindings = (onlyInBase: readonly string[]): Finding[] =>
  onlyInBase.map((label) => ({ label, kind: "missing", text: `${label}: in BASE, missing from NEW (did the candidate stop early? --allow-missing accepts it)` }));
