/**
 * The arithmetic of merging uncoordinated runs' lines, whatever their kind: exact pooled means and deviations from
 * each line's counts, merged HDR histograms for the percentiles, and the small unions (error buckets, counts, tiers,
 * verdicts). Pure.
 */
import { createLatencyHistogram, decodeHistogram } from "../metrics/histograms.ts";
import type { Histogram } from "hdr-histogram-js";
import type { CacheStatus } from "../metrics/cache-check.ts";
import type { CachedTokensByTier } from "../schema/nested.ts";
import type { ErrorEntry } from "../schema/nested.ts";

export const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
export const num = (v: unknown): number => (typeof v === "number" ? v : 0);

/** Exact weighted mean and population std of several (n, mean, std) groups. */
export function pooled(parts: { n: number; mean: number; std: number }[]): { mean: number; std: number } {
  const n = sum(parts.map((p) => p.n));
  if (n === 0) return { mean: 0, std: 0 };
  const mean = sum(parts.map((p) => p.n * p.mean)) / n;
  const second = sum(parts.map((p) => p.n * (p.std * p.std + p.mean * p.mean))) / n;
  return { mean, std: Math.sqrt(Math.max(0, second - mean * mean)) };
}

/** The union of the lines' encoded histograms. */
export function mergedHistogram(encoded: string[]): Histogram {
  const h = createLatencyHistogram();
  for (const e of encoded) h.add(decodeHistogram(e));
  return h;
}

/** An HDR percentile in ms (the histograms hold µs); 0 for an empty one, as the script's `xs or 0`. */
export const pctMs = (h: Histogram, q: number): number => (h.totalCount === 0 ? 0 : h.getValueAtPercentile(q) / 1000);

/** Tokens per tier added up; null when any run lacks the breakdown. */
export function sumTiers(tiers: (CachedTokensByTier | null)[]): CachedTokensByTier | null {
  if (tiers.some((t) => t === null)) return null;
  const ts = tiers as CachedTokensByTier[];
  return { device: sum(ts.map((t) => t.device)), host: sum(ts.map((t) => t.host)), storage: sum(ts.map((t) => t.storage)) };
}

/** The runs' error buckets as one: the same kind and message counted together, largest first, at most 20. */
export function mergeErrors(entries: ErrorEntry[]): ErrorEntry[] {
  const byKey = new Map<string, ErrorEntry>();
  for (const e of entries) {
    const key = `${e.kind}\u0000${e.message}`;
    const seen = byKey.get(key);
    if (seen) seen.count += e.count;
    else byKey.set(key, { ...e });
  }
  return [...byKey.values()].sort((a, b) => b.count - a.count).slice(0, 20);
}

export function addCounts(maps: Record<string, number>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of maps) for (const [k, v] of Object.entries(m)) out[k] = (out[k] ?? 0) + v;
  return out;
}

/** [value, count] pairs added up, most frequent first, at most 10. */
export function topCounts(pairs: [number, number][]): [number, number][] {
  const m = new Map<number, number>();
  for (const [value, count] of pairs) m.set(value, (m.get(value) ?? 0) + count);
  return [...m.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, 10);
}

/** The worst of the runs' cache verdicts. */
export function worstStatus(statuses: CacheStatus[]): CacheStatus {
  for (const s of ["mismatch", "unreported", "ok"] as const) if (statuses.includes(s)) return s;
  return "off";
}

/** false when any is false, true when all are true, else null (not known for all). */
export function allOf(values: unknown[]): boolean | null {
  if (values.some((v) => v === false)) return false;
  return values.every((v) => v === true) ? true : null;
}

/** The sum of the numbers, or null when none of the lines has one (null: not measured). */
export const sumOrNull = (values: unknown[]): number | null => (values.some((v) => typeof v === "number") ? sum(values.map(num)) : null);

/** Weighted mean of the values the lines have; null when none has one. */
export function weightedOrNull(values: unknown[], weights: number[]): number | null {
  const have = values.flatMap((v, k) => (typeof v === "number" ? [[v, weights[k]!] as const] : []));
  if (have.length === 0) return null;
  const w = sum(have.map(([, x]) => x));
  return w === 0 ? null : sum(have.map(([v, x]) => v * x)) / w;
}
