/** Exact order statistics for the harness (numpy's default linear interpolation), on small in-memory arrays. */

/** The p-th percentile (0..100) of `values`, linear interpolation as numpy.percentile; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (rank - lo);
}

/** Arithmetic mean; NaN when empty. */
export function mean(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

/** p50 / p99 / max of a sample, the three figures every table shows. */
export interface Spread {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

/** Spread of `values`; NaNs when empty. */
export function spread(values: readonly number[]): Spread {
  let max = -Infinity;
  for (const v of values) if (v > max) max = v;
  return { count: values.length, p50: percentile(values, 50), p99: percentile(values, 99), max: values.length ? max : NaN };
}

/** A number for a table: fixed decimals, "-" for NaN or null. */
export function fmt(value: number | null | undefined, digits = 2): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return "-";
  return value.toFixed(digits);
}
