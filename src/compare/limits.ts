/** `--max-regress METRIC=PCT%,...`: how much worse NEW may be than BASE, in percent of BASE, per metric. */
import { UsageError } from "../errors.ts";
import { COMPARE_METRICS, compareMetric } from "./metrics.ts";

/**
 * Added to the defaults (no --max-regress) when both sides have repeats: a single run's p99 ITL moves by tens of
 * percent (one stalled step is the tail), so it has a limit only where a 95 % interval absorbs that noise; an
 * outlier repeat widens the interval into "inconclusive" instead of failing.
 */
export const REPEATED_DEFAULT_LIMITS = "p99_itl_ms=10%";

/** Limit per metric name, percent. */
export type Limits = Map<string, number>;

/** Parses `p99_ttft_ms=5%,mean_itl_ms=3%` (the % sign is optional); a bad entry is a UsageError naming it. */
export function parseLimits(text: string, flag = "--max-regress"): Limits {
  const limits: Limits = new Map();
  for (const part of text.split(",").map((p) => p.trim()).filter((p) => p !== "")) {
    const m = /^([a-z0-9_]+)\s*=\s*(\d+(?:\.\d+)?)\s*%?$/.exec(part);
    if (m === null) throw new UsageError(`${flag} "${part}": expected METRIC=PCT%, e.g. p99_ttft_ms=5%`);
    const [, name, pct] = m as unknown as [string, string, string];
    if (compareMetric(name) === undefined) {
      throw new UsageError(`${flag} "${part}": compare knows no metric ${name} (one of: ${COMPARE_METRICS.map((c) => c.name).join(", ")})`);
    }
    limits.set(name, Number(pct));
  }
  if (limits.size === 0) throw new UsageError(`${flag}: no limit given (e.g. p99_ttft_ms=5%)`);
  return limits;
}
