/**
 * numpy-exact statistics on float64 values, so our JSONL numbers equal the reference script's bit for bit.
 *
 * Why not a naive loop: numpy sums float64 with pairwise summation (numpy/_core/src/umath/loops_utils.h.src),
 * so a left-to-right sum differs in the last bits for n > 8 and our output would diff against the script's.
 * numpy 2.x reduces a contiguous float64 array as pairwise_sum(a, n) starting from 0.0 (not, as older
 * numpy did, a[0] + pairwise_sum(a[1:])); checked against numpy 2.4.6 on 200 random arrays for each size
 * from 2 to 300000, and pinned by test/fixtures/metrics/numpy_stats.json.
 */

/** numpy's PW_BLOCKSIZE: at or below it the 8-accumulator loop runs, above it the range is halved. */
const PAIRWISE_BLOCK_SIZE = 128;

/** numpy's DOUBLE_pairwise_sum over values[start, start + n). */
function pairwiseSum(values: ArrayLike<number>, start: number, n: number): number {
  if (n < 8) {
    let res = 0;
    for (let i = 0; i < n; i++) res += values[start + i]!;
    return res;
  }
  if (n <= PAIRWISE_BLOCK_SIZE) {
    let r0 = values[start]!;
    let r1 = values[start + 1]!;
    let r2 = values[start + 2]!;
    let r3 = values[start + 3]!;
    let r4 = values[start + 4]!;
    let r5 = values[start + 5]!;
    let r6 = values[start + 6]!;
    let r7 = values[start + 7]!;
    const unrolledEnd = n - (n % 8);
    let i = 8;
    for (; i < unrolledEnd; i += 8) {
      const base = start + i;
      r0 += values[base]!;
      r1 += values[base + 1]!;
      r2 += values[base + 2]!;
      r3 += values[base + 3]!;
      r4 += values[base + 4]!;
      r5 += values[base + 5]!;
      r6 += values[base + 6]!;
      r7 += values[base + 7]!;
    }
    let res = r0 + r1 + (r2 + r3) + (r4 + r5 + (r6 + r7));
    for (; i < n; i++) res += values[start + i]!;
    return res;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return pairwiseSum(values, start, n2) + pairwiseSum(values, start + n2, n - n2);
}

/** np.sum of a 1-d float64 array (0 for an empty one). */
export function npSum(values: ArrayLike<number>): number {
  // Starts from 0.0, so np.sum([-0.0]) is 0.0 as in numpy.
  return pairwiseSum(values, 0, values.length);
}

/** np.mean: NaN for an empty array, as numpy (which also warns). */
export function npMean(values: ArrayLike<number>): number {
  return npSum(values) / values.length;
}

/** np.std with ddof=0 (population): sqrt(mean(|x - mean|^2)); NaN for an empty array. */
export function npStd(values: ArrayLike<number>): number {
  const n = values.length;
  const mean = npMean(values);
  const squaredDeviations = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const d = values[i]! - mean;
    squaredDeviations[i] = d * d;
  }
  return Math.sqrt(npSum(squaredDeviations) / n);
}

/** Ascending copy; NaN sorts last as in numpy. */
function sortedCopy(values: ArrayLike<number>): Float64Array {
  // Float64Array.prototype.sort is numeric and puts NaN last, matching numpy's partition order.
  return Float64Array.from(values).sort();
}

/** np.median: mean of the middle one or two sorted values; NaN for empty input or any NaN. */
export function npMedian(values: ArrayLike<number>): number {
  const n = values.length;
  if (n === 0) return NaN;
  const sorted = sortedCopy(values);
  if (Number.isNaN(sorted[n - 1]!)) return NaN;
  const half = n >> 1;
  // np.median is np.mean of the middle slice: one value v gives 0 + v, two give ((0 + a) + b) / 2.
  if (n % 2 === 1) return 0 + sorted[half]!;
  return (0 + sorted[half - 1]! + sorted[half]!) / 2;
}

/** numpy's _lerp, including its t >= 0.5 branch that interpolates back from b for better accuracy. */
function numpyLerp(a: number, b: number, t: number): number {
  const diff = b - a;
  return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;
}

/** np.percentile(values, q) with the default 'linear' method; q in [0, 100]. NaN for empty input or any NaN. */
export function npPercentile(values: ArrayLike<number>, q: number): number {
  if (!(q >= 0 && q <= 100)) throw new RangeError(`percentile must be in [0, 100], got ${q}`);
  const n = values.length;
  if (n === 0) return NaN;
  const sorted = sortedCopy(values);
  if (Number.isNaN(sorted[n - 1]!)) return NaN;
  // q / 100 is rounded first (np.true_divide), then multiplied: (n - 1) * (q / 100) is not (n - 1) * q / 100.
  const virtualIndex = (n - 1) * (q / 100);
  let previousIndex = Math.floor(virtualIndex);
  let nextIndex = previousIndex + 1;
  if (virtualIndex >= n - 1) {
    // numpy points both at index -1 (the max), and gamma becomes virtualIndex - (-1).
    previousIndex = -1;
    nextIndex = -1;
  }
  const gamma = virtualIndex - previousIndex;
  const at = (i: number): number => sorted[i < 0 ? n + i : i]!;
  return numpyLerp(at(previousIndex), at(nextIndex), gamma);
}
