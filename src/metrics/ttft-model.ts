/**
 * TTFT ≈ a + b·uncached_tokens, fitted by least squares over every measured request of a sweep. The slope is the
 * prefill cost per uncached token, which is also the TTFT that each cached token saves; the intercept is the
 * fixed overhead (scheduling, first decode step, network).
 */

export interface TtftFit {
  /** Requests in the fit. */
  n: number;
  /** Fixed overhead, ms (the intercept). */
  fixedMs: number;
  /** Prefill cost per uncached prompt token, µs (the slope). */
  prefillUsPerToken: number;
  /** TTFT saved per cached prompt token, µs (equal to the slope under this model). */
  savedUsPerCachedToken: number;
  /** Coefficient of determination of the fit, in [0, 1]; null when the TTFTs do not vary. */
  r2: number | null;
}

/** Fits TTFT (ms) against uncached tokens; null when fewer than 2 distinct x values make a slope meaningless. */
export function fitTtftModel(uncachedTokens: ArrayLike<number>, ttftMs: ArrayLike<number>): TtftFit | null {
  const n = uncachedTokens.length;
  if (n !== ttftMs.length) throw new RangeError("fitTtftModel: arrays differ in length");
  if (n < 2) return null;
  let sx = 0;
  let sy = 0;
  for (let i = 0; i < n; i++) {
    sx += uncachedTokens[i] as number;
    sy += ttftMs[i] as number;
  }
  const mx = sx / n;
  const my = sy / n;
  // Centred sums: the raw-sum formula loses precision with 70k-token x values.
  let sxx = 0;
  let sxy = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = (uncachedTokens[i] as number) - mx;
    const dy = (ttftMs[i] as number) - my;
    sxx += dx * dx;
    sxy += dx * dy;
    syy += dy * dy;
  }
  if (sxx === 0) return null;
  const slopeMsPerToken = sxy / sxx;
  const interceptMs = my - slopeMsPerToken * mx;
  let sse = 0;
  for (let i = 0; i < n; i++) {
    const e = (ttftMs[i] as number) - (interceptMs + slopeMsPerToken * (uncachedTokens[i] as number));
    sse += e * e;
  }
  return {
    n,
    fixedMs: interceptMs,
    prefillUsPerToken: slopeMsPerToken * 1000,
    savedUsPerCachedToken: slopeMsPerToken * 1000,
    r2: syy === 0 ? null : Math.max(0, 1 - sse / syy),
  };
}
