/** `--max-regress METRIC=PCT%,...`: how much worse NEW may be than BASE, in percent of BASE, per metric. */
import { UsageError } from "../errors.ts";
import { COMPARE_METRICS, compareMetric } from "./metrics.ts";
import { canonicalMetricName } from "../schema/metric-name.ts";

/** Limit per metric name, percent. */
export type Limits = Map<string, number>;

/**
 * Parses `p99_ttft_ms=5%,mean_itl_ms=3%`. A relative value takes its percent sign here as in every command (a bare
 * `=10` could be read as 10 % or as a fraction), a metric is named once; a bad entry is a UsageError naming it.
 */
export function parseLimits(text: string, flag = "--max-regress"): Limits {
  const limits: Limits = new Map();
  // Limits are comma-separated; a flag given twice arrives as its values on separate lines.
  for (const part of text
    .split(/[,\n]/)
    .map((p) => p.trim())
    .filter((p) => p !== "")) {
    const m = /^([a-z0-9_.]+)\s*=\s*(\d+(?:\.\d+)?)\s*(%?)$/.exec(part);
    if (m === null) throw new UsageError(`${flag} "${part}": expected METRIC=PCT%, e.g. p99_ttft_ms=5%`);
    const [, written, pct, sign] = m as unknown as [string, string, string, string];
    const name = canonicalMetricName(written, (k) => compareMetric(k) !== undefined);
    if (sign !== "%") throw new UsageError(`${flag} "${part}": write the percent sign (${name}=${pct}%): relative values take one in every command`);
    if (compareMetric(name) === undefined) {
      throw new UsageError(`${flag} "${part}": compare knows no metric ${name} (one of: ${COMPARE_METRICS.map((c) => c.name).join(", ")})`);
    }
    if (limits.has(name)) throw new UsageError(`${flag}: ${name} is named twice (${name}=${limits.get(name)}% and ${name}=${pct}%); name each metric once`);
    limits.set(name, Number(pct));
  }
  if (limits.size === 0) throw new UsageError(`${flag}: no limit given (e.g. p99_ttft_ms=5%)`);
  return limits;
}

/** The defaults with `given` added or overriding them per metric; with `only`, just the metrics it names. */
export function combineLimits(defaults: Limits, given: Limits | null, only: readonly string[] | null): Limits {
  const out: Limits = new Map(defaults);
  for (const [name, pct] of given ?? []) out.set(name, pct);
  if (only === null) return out;
  return new Map([...out].filter(([name]) => only.includes(name)));
}

/** `--only METRIC,...`: the metrics compare judges, each one it knows, named once. */
export function parseOnly(text: string): string[] {
  const names = text
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "")
    .map((n) => canonicalMetricName(n, (k) => compareMetric(k) !== undefined));
  if (names.length === 0) throw new UsageError("--only: no metric given (e.g. --only p99_ttft_ms,output_throughput)");
  for (const name of names) {
    if (compareMetric(name) === undefined)
      throw new UsageError(`--only ${name}: compare knows no metric ${name} (one of: ${COMPARE_METRICS.map((c) => c.name).join(", ")})`);
  }
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) throw new UsageError(`--only: ${twice} is named twice`);
  return names;
}
