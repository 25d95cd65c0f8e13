/**
 * Exact port of CPython's `random.Random(seed)` for int seeds: MT19937 seeded by init_by_array, and
 * `random()` / `choices(population, k=...)` / `gammavariate(alpha, beta)` as in Modules/_randommodule.c and
 * Lib/random.py (3.9-3.13).
 * The reference script draws every token id through one shared Random, so matching its index sequence
 * bit for bit is what makes our prompts the script's prompts (docs/protocol.md §6).
 */

const N = 624;
const M = 397;
const MATRIX_A = 0x9908b0df;
const UPPER_MASK = 0x80000000;
const LOWER_MASK = 0x7fffffff;
const TWO_POW_26 = 67108864.0;
const INV_TWO_POW_53 = 1.0 / 9007199254740992.0;
// Lib/random.py's constants of gammavariate.
const LOG4 = Math.log(4.0);
const SG_MAGICCONST = 1.0 + Math.log(4.5);

/** `abs(seed)` split into 32-bit words, least-significant first; 0 gives [0] (CPython's random_seed). */
export function seedKey(seed: bigint): Uint32Array {
  let n = seed < 0n ? -seed : seed;
  const words: number[] = [];
  while (n > 0n) {
    words.push(Number(n & 0xffffffffn));
    n >>= 32n;
  }
  if (words.length === 0) words.push(0);
  return Uint32Array.from(words);
}

/** CPython `random.Random(seed)` for an int seed of any size. */
export class PyRandom {
  private readonly mt = new Uint32Array(N);
  private index = N;

  constructor(seed: bigint) {
    this.initByArray(seedKey(seed));
  }

  /** An independent generator in the same state: both go on to draw the same sequence. */
  clone(): PyRandom {
    const copy = new PyRandom(0n);
    copy.mt.set(this.mt);
    copy.index = this.index;
    return copy;
  }

  /** The generator's whole state (its 624 words, then its position) as bytes: equal states draw equal sequences. */
  stateBytes(): Uint8Array {
    const words = new Uint32Array(N + 1);
    words.set(this.mt);
    words[N] = this.index;
    return new Uint8Array(words.buffer);
  }

  /**
   * Moves past the next `n` random() calls without computing them (each uses two 32-bit outputs), in a fraction of
   * the time: the state then equals that after `n` calls, e.g. after choices(k=n) from a population below 2**53.
   */
  skipRandoms(n: number): void {
    let outputs = 2 * n;
    while (outputs > 0) {
      if (this.index >= N) this.regenerate();
      const take = Math.min(outputs, N - this.index);
      this.index += take;
      outputs -= take;
    }
  }

  /** `random()`: a double in [0, 1) built from two 32-bit outputs, the first giving the high 27 bits. */
  random(): number {
    const a = this.nextUint32() >>> 5;
    const b = this.nextUint32() >>> 6;
    return (a * TWO_POW_26 + b) * INV_TWO_POW_53;
  }

  /**
   * `choices(population, k=k)` written into out[offset, offset+k): each draw is
   * population[floor(random() * n)]. k <= 0 consumes nothing, as Python's empty range.
   */
  choicesInto(population: Uint32Array, out: Uint32Array, offset: number, k: number): void {
    if (k <= 0) return;
    const n = population.length;
    if (n === 0) throw new Error("choicesInto: empty population");
    if (offset < 0 || offset + k > out.length) {
      throw new Error(`choicesInto: ${k} draws at offset ${offset} do not fit in ${out.length} slots`);
    }
    const end = offset + k;
    for (let i = offset; i < end; i++) {
      // Math.floor(random() * n) < n always holds for n < 2**53, so the read is in range.
      out[i] = population[Math.floor(this.random() * n)]!;
    }
  }

  /**
   * `gammavariate(alpha, beta)`: mean alpha*beta, the same algorithms and draws as Python's (Cheng's for
   * alpha > 1, the exponential for alpha == 1, Kennedy & Gentle's GS below).
   */
  gammavariate(alpha: number, beta: number): number {
    if (!(alpha > 0 && beta > 0)) throw new RangeError(`gammavariate: alpha and beta must be > 0, got ${alpha}, ${beta}`);
    if (alpha > 1.0) {
      const ainv = Math.sqrt(2.0 * alpha - 1.0);
      const bbb = alpha - LOG4;
      const ccc = alpha + ainv;
      for (;;) {
        const u1 = this.random();
        if (!(1e-7 < u1 && u1 < 0.9999999)) continue;
        const u2 = 1.0 - this.random();
        const v = Math.log(u1 / (1.0 - u1)) / ainv;
        const x = alpha * Math.exp(v);
        const z = u1 * u1 * u2;
        const r = bbb + ccc * v - x;
        if (r + SG_MAGICCONST - 4.5 * z >= 0.0 || r >= Math.log(z)) return x * beta;
      }
    }
    if (alpha === 1.0) return -Math.log(1.0 - this.random()) * beta;
    for (;;) {
      const u = this.random();
      const b = (Math.E + alpha) / Math.E;
      const p = b * u;
      const x = p <= 1.0 ? p ** (1.0 / alpha) : -Math.log((b - p) / alpha);
      const u1 = this.random();
      if (p > 1.0 ? u1 <= x ** (alpha - 1.0) : u1 <= Math.exp(-x)) return x * beta;
    }
  }

  private initGenrand(s: number): void {
    const mt = this.mt;
    mt[0] = s >>> 0;
    // Stryker disable next-line EqualityOperator: mt[N] = … on a Uint32Array of length N is a no-op.
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1]!;
      mt[i] = (Math.imul(1812433253, prev ^ (prev >>> 30)) + i) >>> 0;
    }
    this.index = N;
  }

  private initByArray(key: Uint32Array): void {
    const mt = this.mt;
    const keyLength = key.length;
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, keyLength); k > 0; k--) {
      const prev = mt[i - 1]!;
      // The sum of three < 2**32 terms is exact in a double; >>> 0 then reduces it mod 2**32.
      mt[i] = ((mt[i]! ^ Math.imul(prev ^ (prev >>> 30), 1664525)) + key[j]! + j) >>> 0;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1]!;
        i = 1;
      }
      if (j >= keyLength) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      const prev = mt[i - 1]!;
      mt[i] = ((mt[i]! ^ Math.imul(prev ^ (prev >>> 30), 1566083941)) - i) >>> 0;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1]!;
        i = 1;
      }
    }
    mt[0] = UPPER_MASK;
    this.index = N;
  }

  private regenerate(): void {
    const mt = this.mt;
    let kk = 0;
    for (; kk < N - M; kk++) {
      const y = (mt[kk]! & UPPER_MASK) | (mt[kk + 1]! & LOWER_MASK);
      mt[kk] = mt[kk + M]! ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
    }
    for (; kk < N - 1; kk++) {
      const y = (mt[kk]! & UPPER_MASK) | (mt[kk + 1]! & LOWER_MASK);
      mt[kk] = mt[kk + (M - N)]! ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
    }
    const y = (mt[N - 1]! & UPPER_MASK) | (mt[0]! & LOWER_MASK);
    mt[N - 1] = mt[M - 1]! ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
    this.index = 0;
  }

  private nextUint32(): number {
    if (this.index >= N) this.regenerate();
    let y = this.mt[this.index++]!;
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }
}
