/**
 * TTFT ≈ a + b·uncached_tokens, fitted by least squares over every measured request of a sweep. The slope is the
 * prefill cost per uncached token, which is also the TTFT that each cached token saves; the intercept is the
 * fixed overhead (scheduling, first decode step, network).
 *
 * Each pct line carries the fit's sufficient statistics (count, means, centred second moments), which merge exactly
 * (Chan et al.'s pairwise update) into the sweep's fit: so the model is recomputable from the pct lines alone, by
 * `warmbench report` or by anyone, without keeping every request. Centred moments, not raw sums: with 70k-token x
 * values the raw-sum formula loses most of its digits.
 */
import type { SweepRecord } from "../schema/lines.ts";

// Both shapes are the line's (ttft_fit, ttft_model), each field with what it means: declared once in the schema.
/** Sufficient statistics of (uncached tokens, TTFT ms) pairs, as written in each pct line's `ttft_fit`. */
export type TtftMoments = NonNullable<SweepRecord["ttft_fit"]>;

/** The fitted model, as written in `ttft_model` and printed after the sweep. */
export type TtftModel = NonNullable<SweepRecord["ttft_model"]>;

/** The moments of paired samples; null for none. */
export function ttftMoments(uncachedTokens: ArrayLike<number>, ttftMs: ArrayLike<number>): TtftMoments | null {
  const n = uncachedTokens.length;
  if (n !== ttftMs.length) throw new RangeError("ttftMoments: arrays differ in length");
  if (n === 0) return null;
  let sx = 0;
  let sy = 0;
  for (let i = 0; i < n; i++) {
    sx += uncachedTokens[i] as number;
    sy += ttftMs[i] as number;
  }
  const mx = sx / n;
  const my = sy / n;
  let m2x = 0;
  let m2y = 0;
  let cxy = 0;
  for (let i = 0; i < n; i++) {
    const dx = (uncachedTokens[i] as number) - mx;
    const dy = (ttftMs[i] as number) - my;
    m2x += dx * dx;
    m2y += dy * dy;
    cxy += dx * dy;
  }
  return { n, mean_uncached_tokens: mx, mean_ttft_ms: my, m2_uncached_tokens: m2x, m2_ttft_ms: m2y, c_uncached_ttft: cxy };
}

/** The moments of the union of two sample sets (either may be null). */
export function mergeTtftMoments(a: TtftMoments | null, b: TtftMoments | null): TtftMoments | null {
  if (a === null || a.n === 0) return b;
  if (b === null || b.n === 0) return a;
  const n = a.n + b.n;
  const dx = b.mean_uncached_tokens - a.mean_uncached_tokens;
  const dy = b.mean_ttft_ms - a.mean_ttft_ms;
  const w = (a.n * b.n) / n;
  return {
    n,
    mean_uncached_tokens: a.mean_uncached_tokens + (dx * b.n) / n,
    mean_ttft_ms: a.mean_ttft_ms + (dy * b.n) / n,
    m2_uncached_tokens: a.m2_uncached_tokens + b.m2_uncached_tokens + dx * dx * w,
    m2_ttft_ms: a.m2_ttft_ms + b.m2_ttft_ms + dy * dy * w,
    c_uncached_ttft: a.c_uncached_ttft + b.c_uncached_ttft + dx * dy * w,
  };
}

/** The least-squares line of the moments; null when fewer than 2 distinct x values make a slope meaningless. */
export function fitFromMoments(m: TtftMoments | null): TtftModel | null {
  if (m === null || m.n < 2 || !(m.m2_uncached_tokens > 0)) return null;
  const slopeMsPerToken = m.c_uncached_ttft / m.m2_uncached_tokens;
  const interceptMs = m.mean_ttft_ms - slopeMsPerToken * m.mean_uncached_tokens;
  // For the least-squares line, the residual sum of squares is Syy − Sxy²/Sxx.
  const sse = m.m2_ttft_ms - (m.c_uncached_ttft * m.c_uncached_ttft) / m.m2_uncached_tokens;
  return {
    n: m.n,
    fixed_ms: interceptMs,
    prefill_us_per_token: slopeMsPerToken * 1000,
    saved_us_per_cached_token: slopeMsPerToken * 1000,
    r2: m.m2_ttft_ms > 0 ? Math.min(1, Math.max(0, 1 - sse / m.m2_ttft_ms)) : null,
  };
}

/** Fits TTFT (ms) against uncached tokens directly from the samples. */
export function fitTtftModel(uncachedTokens: ArrayLike<number>, ttftMs: ArrayLike<number>): TtftModel | null {
  return fitFromMoments(ttftMoments(uncachedTokens, ttftMs));
}
