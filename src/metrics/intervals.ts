/**
 * Confidence intervals, pure statistics. Over repeats (`run --repeat N`): a line's mean with its t interval and
 * coefficient of variation (the console, gates judged on the mean, --repeat-until-cv), and the 95 % interval of a
 * difference of means (compare): Welch's t interval. Within one run (compare without repeats): a seeded percentile
 * bootstrap of a statistic's relative change over each side's samples, and the standard errors of a least-squares
 * line from its sufficient statistics (the TTFT model). Over repeats, Welch rather than a
 * bootstrap because a release pipeline has 2-5 repeats per side, where a bootstrap over repeats has only a few
 * distinct resamples and its percentile interval is too narrow; Welch rather than Student's pooled t because the two
 * sides need not share a variance (a regression often widens the spread too). It assumes each side's repeat values
 * are roughly normal around their mean, which holds for means and throughputs of a line and is approximate for tail
 * percentiles (hence their wider limits).
 */
import { seededUniform } from "./seeded-uniform.ts";

/** ln Γ(x) (Lanczos, g = 7, n = 9): 15 significant digits for x > 0. */
function lnGamma(x: number): number {
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012,
    9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x);
  const z = x - 1;
  let a = c[0]!;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += c[i]! / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** The continued fraction of the incomplete beta function (modified Lentz). */
function betaFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    for (const num of [(m * (b - m) * x) / ((a + m2 - 1) * (a + m2)), (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1))]) {
      d = 1 + num * d;
      if (Math.abs(d) < tiny) d = tiny;
      c = 1 + num / c;
      if (Math.abs(c) < tiny) c = tiny;
      d = 1 / d;
      h *= d * c;
    }
    if (Math.abs(d * c - 1) < 1e-15) break;
  }
  return h;
}

/** The regularized incomplete beta function I_x(a, b). */
function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(lnGamma(a + b) - lnGamma(a) - lnGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  return x < (a + 1) / (a + b + 2) ? (front * betaFraction(a, b, x)) / a : 1 - (front * betaFraction(b, a, 1 - x)) / b;
}

/** P(T <= t) for Student's t with `df` degrees of freedom (df need not be an integer: Welch's is not). */
export function studentTCdf(t: number, df: number): number {
  const tail = 0.5 * incompleteBeta(df / (df + t * t), df / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

/** The t with P(T <= t) = p, by bisection (monotone CDF; 200 halvings reach double precision). */
export function studentTQuantile(p: number, df: number): number {
  if (!(p > 0 && p < 1) || !(df > 0)) throw new RangeError(`studentTQuantile(${p}, ${df})`);
  if (p < 0.5) return -studentTQuantile(1 - p, df);
  let lo = 0;
  let hi = 1;
  while (studentTCdf(hi, df) < p) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (studentTCdf(mid, df) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

export const mean = (xs: readonly number[]): number => xs.reduce((s, x) => s + x, 0) / xs.length;

/** The sample variance (n - 1 in the denominator). */
export function sampleVariance(xs: readonly number[]): number {
  const m = mean(xs);
  return xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1);
}

export interface DiffInterval {
  meanBase: number;
  meanNew: number;
  /** meanNew - meanBase. */
  diff: number;
  lo: number;
  hi: number;
  /** Welch-Satterthwaite degrees of freedom (Infinity when both sides have no spread). */
  df: number;
}

/**
 * Welch's interval for mean(next) - mean(base) at `level` (two-sided). Needs two or more values per side. With no
 * spread on either side the interval is the point itself.
 */
export function welchInterval(base: readonly number[], next: readonly number[], level = 0.95): DiffInterval {
  if (base.length < 2 || next.length < 2) throw new RangeError("welchInterval: two or more values per side");
  const meanBase = mean(base);
  const meanNew = mean(next);
  const qa = sampleVariance(base) / base.length;
  const qb = sampleVariance(next) / next.length;
  const se = Math.sqrt(qa + qb);
  const diff = meanNew - meanBase;
  if (se === 0) return { meanBase, meanNew, diff, lo: diff, hi: diff, df: Infinity };
  const df = (qa + qb) ** 2 / (qa ** 2 / (base.length - 1) + qb ** 2 / (next.length - 1));
  const t = studentTQuantile(1 - (1 - level) / 2, df);
  return { meanBase, meanNew, diff, lo: diff - t * se, hi: diff + t * se, df };
}

/** A side's own mean with its `level` t interval and coefficient of variation (sd / mean), for the console. */
export function meanInterval(xs: readonly number[], level = 0.95): { mean: number; half: number; cv: number } {
  const m = mean(xs);
  if (xs.length < 2) return { mean: m, half: NaN, cv: NaN };
  const sd = Math.sqrt(sampleVariance(xs));
  return { mean: m, half: studentTQuantile(1 - (1 - level) / 2, xs.length - 1) * (sd / Math.sqrt(xs.length)), cv: m === 0 ? NaN : sd / m };
}

/** What a bootstrap computes of each resample: the mean, or a percentile (0-100) as numpy's linear interpolation. */
export type SampleStatistic = { kind: "mean" } | { kind: "percentile"; percentile: number };

/**
 * The statistic of a resample given as `counts[i]` draws of `sorted[i]` (ascending): no copy and no sort per
 * resample, one pass over the counts.
 */
function statisticOfCounts(sorted: Float64Array, counts: Uint32Array, n: number, stat: SampleStatistic): number {
  if (stat.kind === "mean") {
    let sum = 0;
    for (let i = 0; i < sorted.length; i++) if (counts[i]! > 0) sum += counts[i]! * sorted[i]!;
    return sum / n;
  }
  const rank = (stat.percentile / 100) * (n - 1);
  const lo = Math.floor(rank);
  const frac = rank - lo;
  // The resample's order statistics at positions lo and lo + 1: the first value whose running count passes each.
  let seen = 0;
  let atLo = Number.NaN;
  for (let i = 0; i < sorted.length; i++) {
    seen += counts[i]!;
    if (Number.isNaN(atLo) && seen > lo) {
      atLo = sorted[i]!;
      if (frac === 0) return atLo;
    }
    if (!Number.isNaN(atLo) && seen > lo + 1) return atLo + frac * (sorted[i]! - atLo);
  }
  return atLo;
}

/** One resample of `sorted` (n draws with replacement) as counts per position. */
function resampleCounts(sorted: Float64Array, counts: Uint32Array, uniform: () => number): void {
  counts.fill(0);
  const n = sorted.length;
  for (let j = 0; j < n; j++) counts[Math.floor(uniform() * n)]! += 1;
}

/** Draws per bootstrap: 1000, fewer for very large samples so one line costs at most a few million draws. */
const bootstrapResamples = (n: number): number => Math.min(1000, Math.max(200, Math.floor(4_000_000 / Math.max(1, n))));

/**
 * The `level` percentile-bootstrap interval of the relative change (next - base) / |base| x 100 of a statistic, each
 * side resampled on its own (the two runs are independent), from a fixed `seed`. Null when a side has fewer than 2
 * samples, or when BASE's statistic is 0 in a resample (no relative change from 0).
 */
export function bootstrapChangePct(base: Float64Array, next: Float64Array, stat: SampleStatistic, seed: number, level = 0.95): [number, number] | null {
  if (base.length < 2 || next.length < 2) return null;
  const uniform = seededUniform(seed);
  const reps = bootstrapResamples(Math.max(base.length, next.length));
  const countsBase = new Uint32Array(base.length);
  const countsNext = new Uint32Array(next.length);
  const changes = new Float64Array(reps);
  for (let r = 0; r < reps; r++) {
    resampleCounts(base, countsBase, uniform);
    resampleCounts(next, countsNext, uniform);
    const b = statisticOfCounts(base, countsBase, base.length, stat);
    const x = statisticOfCounts(next, countsNext, next.length, stat);
    if (!(b !== 0 && Number.isFinite(b) && Number.isFinite(x))) return null;
    changes[r] = ((x - b) / Math.abs(b)) * 100;
  }
  changes.sort();
  const at = (q: number) => changes[Math.min(reps - 1, Math.max(0, Math.round(q * (reps - 1))))]!;
  return [at((1 - level) / 2), at(1 - (1 - level) / 2)];
}

/** The fit's slope and intercept with their standard errors and the residual degrees of freedom. */
export interface LineFitErrors {
  slope: number;
  intercept: number;
  slopeSe: number;
  interceptSe: number;
  df: number;
}

/**
 * Ordinary least squares standard errors from sufficient statistics (n, means, centred second moments): s² = SSE /
 * (n - 2), se(slope) = s / √Sxx, se(intercept) = s √(1/n + x̄²/Sxx). Null with fewer than 3 points or no spread in x.
 */
export function lineFitErrors(m: { n: number; meanX: number; meanY: number; m2X: number; m2Y: number; cXY: number }): LineFitErrors | null {
  if (m.n < 3 || !(m.m2X > 0)) return null;
  const slope = m.cXY / m.m2X;
  const intercept = m.meanY - slope * m.meanX;
  const sse = Math.max(0, m.m2Y - (m.cXY * m.cXY) / m.m2X);
  const s2 = sse / (m.n - 2);
  return {
    slope,
    intercept,
    slopeSe: Math.sqrt(s2 / m.m2X),
    interceptSe: Math.sqrt(s2 * (1 / m.n + (m.meanX * m.meanX) / m.m2X)),
    df: m.n - 2,
  };
}

/**
 * The `level` interval of b - a for two independent estimates with standard errors and degrees of freedom
 * (Welch-Satterthwaite for the combined df): the point itself when neither has an error.
 */
export function estimateDiffInterval(
  a: { value: number; se: number; df: number },
  b: { value: number; se: number; df: number },
  level = 0.95,
): { lo: number; hi: number } {
  const diff = b.value - a.value;
  const qa = a.se * a.se;
  const qb = b.se * b.se;
  const se = Math.sqrt(qa + qb);
  if (se === 0) return { lo: diff, hi: diff };
  const df = (qa + qb) ** 2 / ((qa > 0 ? qa ** 2 / a.df : 0) + (qb > 0 ? qb ** 2 / b.df : 0));
  const t = studentTQuantile(1 - (1 - level) / 2, df);
  return { lo: diff - t * se, hi: diff + t * se };
}
