/**
 * A prompt's pages as chained hash ids: page k's id fixes its tokens and every page before it, so two prompts share a
 * prefix of whole pages exactly as far as they share leading ids (the last, partial page gets an id of its own too).
 * 52-bit ids (exact in a double), from an FNV-1a over the previous id and the page's tokens.
 */
const PRIME = 0x100000001b3n;
const MASK = (1n << 52n) - 1n;

export function pageChainHashes(ids: ArrayLike<number>, pageSize: number): number[] {
  const out: number[] = [];
  let h = 0xcbf29ce484222325n & MASK;
  for (let start = 0; start < ids.length; start += pageSize) {
    const end = Math.min(ids.length, start + pageSize);
    for (let i = start; i < end; i++) h = ((h ^ BigInt(ids[i]!)) * PRIME) & MASK;
    // The page's length too: a partial page is not the prefix of a whole one with the same first tokens.
    h = ((h ^ BigInt(end - start + 0x10000)) * PRIME) & MASK;
    out.push(Number(h));
  }
  return out;
}
