/**
 * THE line builder: every measured line (a sweep's point, a capacity probe, a replay window, a multi-turn round) is
 * made here from named groups of keys, each group computed by the one function that owns it (the script's metrics,
 * the cache verdict, the client's health, the evidence, the provenance, a producer's own keys). A key given by two
 * groups, or one its kind does not carry, is a programming error caught at once, not a line that drifts: 0.3's round
 * lines lacked client_own_lag_p99_ms that their client_saturated was computed from, and the replay patched five keys
 * of a finished line. Order and schema_version come from the key table (lines.ts).
 */
import { KEYS_OF, orderLine, type LineKind } from "./lines.ts";

export type KeyGroup = Readonly<Record<string, unknown>>;

export function buildLine(kind: LineKind, groups: Readonly<Record<string, KeyGroup>>): Record<string, unknown> {
  const carried = new Set<string>(KEYS_OF[kind]);
  const owner = new Map<string, string>();
  const fields: Record<string, unknown> = {};
  for (const [group, keys] of Object.entries(groups)) {
    for (const [key, value] of Object.entries(keys)) {
      if (value === undefined) continue;
      if (!carried.has(key)) throw new Error(`buildLine(${kind}): group ${group} gives ${key}, which a ${kind} line does not carry (schema/lines.ts)`);
      const first = owner.get(key);
      if (first !== undefined) throw new Error(`buildLine(${kind}): ${key} is given by both ${first} and ${group}: one group owns each key`);
      owner.set(key, group);
      fields[key] = value;
    }
  }
  return orderLine(kind, fields);
}
