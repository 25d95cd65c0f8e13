/**
 * THE line builder: every measured line (a sweep's point, a capacity probe, a replay window, a multi-turn round) is
 * made here from named groups of keys, each group computed by the one function that owns it (the script's metrics,
 * the cache verdict, the client's health, the evidence, the provenance, a producer's own keys). A key given by two
 * groups, or one its kind does not carry, is a programming error caught at once, not a line that drifts: 0.3's round
 * lines lacked client_own_lag_p99_ms that their client_saturated was computed from, and the replay patched five keys
 * of a finished line. Order and schema_version come from the key table (lines.ts).
 *
 * Typed from the key table too: each group is a partial line of the kind, and a key the kind does not carry (or a
 * misspelt one), given in an object literal or through a spread or a variable, does not compile, the error naming it
 * (test/unit/schema/build-line-types.test.ts). The runtime checks stay, for what the types cannot see.
 */
import { KEYS_OF, orderLine, type KeyOf, type LineOf, type LinePart } from "./lines.ts";
import type { LineKind } from "./key-table.ts";

/** A group of keys for a line of kind K: any of the kind's keys, with its type there; an undefined value leaves the key out. */
export type KeyGroup<K extends LineKind> = LinePart<K>;

/** The keys of a group, of every member where the group is a union (keyof a union holds only the common ones). */
type KeysOfGroup<G> = G extends unknown ? keyof G : never;

/** The keys the groups give that a line of kind K does not carry (misspelt ones included); never when there are none. */
type NotCarried<K extends LineKind, G> = { [P in keyof G]: Exclude<KeysOfGroup<G[P]>, KeyOf<K>> }[keyof G];

/** A group again, each key the kind does not carry required to be a message naming it: the compile error says which. */
type Refused<K extends LineKind, T> = T extends unknown
  ? { readonly [N in keyof T]: N extends KeyOf<K> ? T[N] : `${N & string} is not a key of a ${K} line (schema/key-table.ts)` }
  : never;

/**
 * The groups of a line of kind K: each a partial line of the kind (G's constraint: every value of its key's type), and
 * none with a key the kind does not carry. The second is checked on the groups' own types, not by TypeScript's
 * excess-property check (which sees object literals only), so a group spread from a variable, or a variable itself,
 * is held to it too.
 */
type LineGroups<K extends LineKind, G> = [NotCarried<K, G>] extends [never] ? G : { readonly [P in keyof G]: Refused<K, G[P]> };

export function buildLine<K extends LineKind, G extends { readonly [P in keyof G]: KeyGroup<K> }>(kind: K, groups: LineGroups<K, G>): LineOf<K>;
// The implementation sees groups as plain objects of keys (the signature above has typed them) and makes the line.
export function buildLine(kind: LineKind, groups: Readonly<Record<string, object>>): unknown {
  const carried = new Set<string>(KEYS_OF[kind]);
  const owner = new Map<string, string>();
  const fields: Record<string, unknown> = {};
  for (const [group, keys] of Object.entries(groups)) {
    for (const [key, value] of Object.entries(keys)) {
      if (value === undefined) continue;
      if (!carried.has(key))
        throw new Error(`buildLine(${kind}): group ${group} gives ${key}, which a ${kind} line does not carry (schema/key-table.ts: its lines)`);
      const first = owner.get(key);
      if (first !== undefined) throw new Error(`buildLine(${kind}): ${key} is given by both ${first} and ${group}: one group owns each key`);
      owner.set(key, group);
      fields[key] = value;
    }
  }
  return orderLine(kind, fields);
}
