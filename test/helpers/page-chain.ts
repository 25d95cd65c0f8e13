import type { CacheSequence } from "../../src/metrics/cache-model.ts";

/** Page chain hashes as the client makes them: one id per page of tokens (block = page), named by every token up to its end. */
export function sequenceOf(tokens: readonly number[], page: number, ids: Map<string, number>): CacheSequence {
  const hashIds: number[] = [];
  for (let k = 0; k * page < tokens.length; k++) {
    const key = tokens.slice(0, Math.min(tokens.length, (k + 1) * page)).join(",");
    if (!ids.has(key)) ids.set(key, ids.size + 1);
    hashIds.push(ids.get(key)!);
  }
  return { hashIds, length: tokens.length };
}
