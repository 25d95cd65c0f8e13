/**
 * A seeded uniform generator on [0, 1) (mulberry32): a bootstrap drawn from it gives the same interval for the same
 * files on every machine and every run, so a verdict never flips on the draw; a bench's synthetic corpus is the same
 * in every run.
 */
export function seededUniform(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
