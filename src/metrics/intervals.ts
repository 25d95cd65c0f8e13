/**
 * Confidence intervals over repeats (`run --repeat N`), pure statistics: a line's mean with its t interval and
 * coefficient of variation (the console, gates judged on the mean, --repeat-until-cv), and the 95 % interval of a
 * difference of means (compare): Welch's t interval. Welch rather than a
 * bootstrap because a release pipeline has 2-5 repeats per side, where a bootstrap over repeats has only a few
 * distinct resamples and its percentile interval is too narrow; Welch rather than Student's pooled t because the two
 * sides need not share a variance (a regression often widens the spread too). It assumes each side's repeat values
 * are roughly normal around their mean, which holds for means and throughputs of a line and is approximate for tail
 * percentiles (hence their wider limits).
 */

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
