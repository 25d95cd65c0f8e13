/**
 * Which of a working set's prefixes each prompt shares. The script's sweep takes them in rotation (prompt i shares
 * prefix i mod K); a routed sweep draws them in a seeded random order instead - each prefix still shared by the same
 * number of prompts - since a rotation routed round-robin over R replicas sends each prefix to the same replica
 * whenever R divides K: an affinity router by accident.
 */

/** Prefix of each of `count` prompts: K groups in equal shares, in an order shuffled from `seed`. */
export function shuffledGroups(count: number, workingSet: number, seed: bigint): Int32Array {
  const groups = new Int32Array(count);
  for (let i = 0; i < count; i++) groups[i] = i % workingSet;
  // xorshift32 from the seed's low bits (any seed, same order every run).
  let x = Number(BigInt.asUintN(32, seed ^ 0x9e3779b9n)) || 1;
  const next = (): number => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
  for (let i = count - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    const t = groups[i]!;
    groups[i] = groups[j]!;
    groups[j] = t;
  }
  return groups;
}
