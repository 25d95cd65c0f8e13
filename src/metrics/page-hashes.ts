/**
 * A prompt's pages as chained hash ids: page k's id fixes its tokens and every page before it, so two prompts share a
 * prefix of whole pages exactly as far as they share leading ids (the last, partial page gets an id of its own too:
 * its length is hashed in). Two 32-bit FNV-1a lanes with different offsets make a 53-bit id (exact in a double), so
 * no BigInt is needed per token.
 */
const PRIME = 16777619;

export function pageChainHashes(ids: ArrayLike<number>, pageSize: number): number[] {
  const out: number[] = [];
  let a = 2166136261 | 0;
  let b = 0x6b43a9b5 | 0;
  for (let start = 0; start < ids.length; start += pageSize) {
    const end = Math.min(ids.length, start + pageSize);
    for (let i = start; i < end; i++) {
      const id = ids[i]!;
      a = Math.imul(a ^ id, PRIME);
      b = Math.imul(b ^ (id + 0x9e3779b9), PRIME);
    }
    // The page's length too: a partial page is not the prefix of a whole one with the same first tokens.
    a = Math.imul(a ^ (end - start + 0x10000), PRIME);
    b = Math.imul(b ^ (end - start), PRIME);
    out.push((a >>> 0) * 2 ** 21 + (b >>> 11));
  }
  return out;
}
