/**
 * The Point model: one line type for every measured unit. A point is a sweep line (axes: shared_prefix_pct,
 * working_set, request_rate) or a multi-turn round line (axes: round, working_set); both carry the same metrics where
 * they measure the same thing, and the same provenance. Which keys each kind carries, in which order (the order they
 * are written in, byte for byte), and which of them a line may leave out, is derived here from the key table
 * (key-table.ts: each key's `lines` and `optional`), at run time and in the types alike.
 */
import { KEYS, LINE_KINDS, type KeyDef, type KeyName, type LineKind, type OptionalBecause } from "./key-table.ts";
import type { TypeOf } from "./shape.ts";

/** Bumped when a key changes meaning (adding a key does not). */
export const SCHEMA_VERSION = 2;

type Keys = typeof KEYS;
/** The keys a line may leave out for the reason W (key-table.ts OPTIONAL_BECAUSE). */
type OptionalFor<W extends OptionalBecause> = { [N in KeyName]: Keys[N] extends { optional: W } ? N : never }[KeyName];
/** The reference script's keys (KeyDef.script). */
type ScriptKeyName = { [N in KeyName]: Keys[N] extends { script: true } ? N : never }[KeyName];
/** The value of key N in a line of kind K (a round line's own shape where it has one). */
type ValueIn<K extends LineKind, N extends KeyName> = K extends "round"
  ? Keys[N] extends { roundShape: infer R }
    ? TypeOf<R>
    : TypeOf<Keys[N]["shape"]>
  : TypeOf<Keys[N]["shape"]>;
type Flat<T> = { [P in keyof T]: T[P] };
// Each a single pass over the table: an Extract or Exclude of one key union by another costs the compiler dearly here.
type KeysIn<K extends LineKind> = { [N in KeyName]: K extends keyof Keys[N]["lines"] ? N : never }[KeyName];
type OptionalIn<K extends LineKind> = {
  [N in KeyName]: K extends keyof Keys[N]["lines"] ? (Keys[N] extends { optional: OptionalBecause } ? N : never) : never;
}[KeyName];
type RequiredIn<K extends LineKind> = {
  [N in KeyName]: K extends keyof Keys[N]["lines"] ? (Keys[N] extends { optional: OptionalBecause } ? never : N) : never;
}[KeyName];
/**
 * Each kind's keys, line and group types, computed once a kind: a generic kind (buildLine's K) indexes them rather
 * than instantiating the table's conditional types with a type parameter, which made one call cost the checker seconds.
 */
type ByKind = { sweep: KindTypes<"sweep">; round: KindTypes<"round">; capacity: KindTypes<"capacity"> };
type KindTypes<K extends LineKind> = {
  keys: KeysIn<K>;
  optional: OptionalIn<K>;
  line: Flat<{ [N in RequiredIn<K>]: ValueIn<K, N> } & { [N in OptionalIn<K>]?: ValueIn<K, N> }>;
  group: { readonly [N in KeysIn<K>]?: ValueIn<K, N> | undefined };
};
/** The keys a line of kind K carries (those whose `lines` name K). */
export type KeyOf<K extends LineKind> = ByKind[K]["keys"];
/** A key a line of the kind may leave out (key-table.ts: KeyDef.optional, which says why). */
type OptionalKeyOf<K extends LineKind> = ByKind[K]["optional"];
/** A line of kind K: every key the kind carries, with its type there; the optional ones optional. */
export type LineOf<K extends LineKind> = ByKind[K]["line"];
/** Some of a line of kind K's keys, each with its type there; an undefined value is a key left out. */
export type LinePart<K extends LineKind> = ByKind[K]["group"];

const defOf = (name: KeyName): KeyDef => KEYS[name];
/** Where the key sits in a line of the kind; undefined: the kind does not carry it. */
const ordinalIn = (kind: LineKind, name: KeyName): number | undefined => defOf(name).lines[kind];

/** The kind's keys in the order written: ascending ordinal. Two keys of one ordinal are a mistake of the table, refused at once. */
function keysIn(kind: LineKind): KeyName[] {
  const names = (Object.keys(KEYS) as KeyName[]).filter((name) => ordinalIn(kind, name) !== undefined);
  names.sort((a, b) => ordinalIn(kind, a)! - ordinalIn(kind, b)!);
  names.forEach((name, i) => {
    const before = names[i - 1];
    if (before !== undefined && ordinalIn(kind, before) === ordinalIn(kind, name))
      throw new Error(`key-table.ts: ${before} and ${name} have the same ordinal (${ordinalIn(kind, name)}) in a ${kind} line`);
  });
  return names;
}

/** Each kind's keys, in the order written. */
export const KEYS_OF = {
  sweep: keysIn("sweep") as readonly KeyOf<"sweep">[],
  round: keysIn("round") as readonly KeyOf<"round">[],
  capacity: keysIn("capacity") as readonly KeyOf<"capacity">[],
} as const;

const isScript = (name: KeyName): name is ScriptKeyName => defOf(name).script === true;
const optionalFor =
  <W extends OptionalBecause>(why: W) =>
  (name: KeyName): name is OptionalFor<W> =>
    defOf(name).optional === why;

/** The script's keys, in its order (maybe_write_summary_jsonl): a sweep line starts with them, a drop-in for its files. */
export const SCRIPT_KEYS: readonly ScriptKeyName[] = KEYS_OF.sweep.filter(isScript);
/** A sweep line's keys after the script's, in the order written. */
export const OWN_KEYS: readonly Exclude<KeyOf<"sweep">, ScriptKeyName>[] = KEYS_OF.sweep.filter(
  (name): name is Exclude<KeyOf<"sweep">, ScriptKeyName> => !isScript(name),
);
/** The keys only a trace replay's lines carry (optional in sweep lines). */
export const REPLAY_KEYS: readonly OptionalFor<"replay">[] = KEYS_OF.sweep.filter(optionalFor("replay"));
/** The keys of the cache-fidelity check (--check-fidelity): in a line only when it ran. */
export const FIDELITY_KEYS: readonly OptionalFor<"check-fidelity">[] = KEYS_OF.sweep.filter(optionalFor("check-fidelity"));
/** The keys of a line served by several replicas (--base-url A,B,...): the routing and the hit-loss ledger. */
export const REPLICA_KEYS: readonly OptionalFor<"replicas">[] = KEYS_OF.sweep.filter(optionalFor("replicas"));

/** Each kind's optional keys, in the order written. */
export const OPTIONAL_KEYS: { readonly [K in LineKind]: readonly OptionalKeyOf<K>[] } = {
  sweep: KEYS_OF.sweep.filter((name): name is OptionalKeyOf<"sweep"> => defOf(name).optional !== undefined),
  round: KEYS_OF.round.filter((name): name is OptionalKeyOf<"round"> => defOf(name).optional !== undefined),
  capacity: KEYS_OF.capacity.filter((name): name is OptionalKeyOf<"capacity"> => defOf(name).optional !== undefined),
};

/** A sweep line: a (pct, working set, request rate) cell of a sweep. */
export type SweepRecord = LineOf<"sweep">;
/** A multi-turn round line. */
export type RoundRecord = LineOf<"round">;
/** A capacity search's result for one pct (not a measured point: its probes are). */
export type CapacityRecord = LineOf<"capacity">;
/** A capacity line as read from a file: what compare pairs by pct and the report charts. */
export type CapacityLine = Partial<CapacityRecord> & { type: "capacity"; shared_prefix_pct: number };
/** Any measured point. */
export type Point = SweepRecord | RoundRecord;
/** What every point carries, whatever its kind (the keys both kinds write, as each kind types them). */
export type PointLine = Pick<SweepRecord, Extract<keyof SweepRecord, keyof RoundRecord>> | Pick<RoundRecord, Extract<keyof SweepRecord, keyof RoundRecord>>;

/** Keys of a kind whose value is a number (or null where it could not be measured): what a gate or a limit may name. */
export type NumericKeyOf<L> = { [N in keyof L]-?: [L[N]] extends [number | null] ? N : never }[keyof L];

/** The numeric keys of a kind, in line order. */
export const numericKeysOf = (kind: LineKind): KeyName[] =>
  KEYS_OF[kind].filter((name) => {
    const def = defOf(name);
    return (kind === "round" && def.roundShape ? def.roundShape : def.shape).numeric;
  });

/** Which kinds carry a key. */
export const kindsOf = (name: KeyName): LineKind[] => LINE_KINDS.filter((kind) => ordinalIn(kind, name) !== undefined);

/** The line with its keys in its kind's order, schema_version set (absent optional keys skipped). */
export function orderLine(kind: LineKind, fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of KEYS_OF[kind]) {
    const value = key === "schema_version" ? SCHEMA_VERSION : fields[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}
