/**
 * A minimal typed JSON Schema builder: each shape is a JSON Schema fragment that also carries the TypeScript type of
 * the value it describes, so the key table (keys.ts) gives the line types, the published schema and the docs from one
 * declaration. Imports nothing: the schema layer is the bottom of the tree.
 */

export type JsonSchema = Record<string, unknown>;

/** A JSON Schema fragment for values of type T; `numeric` marks numbers (or null) a gate or limit may name. */
export interface Shape<T> {
  readonly json: JsonSchema;
  readonly numeric: boolean;
  /** Phantom: the TypeScript type of a value; never set. */
  readonly _type?: T;
}

export type TypeOf<S> = S extends Shape<infer T> ? T : never;

const shape = <T>(json: JsonSchema, numeric = false): Shape<T> => ({ json, numeric });

/** Where Python's json writes bare Infinity / -Infinity / NaN, a reader maps them to these strings (JSON has none). */
export const NON_FINITE = ["Infinity", "-Infinity", "NaN"] as const;

/** A float as the script writes it: finite, or one of Python's non-finite tokens (see NON_FINITE). */
export const num = (): Shape<number> => shape({ $ref: "#/$defs/number" }, true);
/** A whole number (a count, a token length): never non-finite. */
export const int = (): Shape<number> => shape({ type: "integer" }, true);
/** A whole number that is a label, not a measurement (schema_version): no gate or limit may name it. */
export const label = (): Shape<number> => shape({ type: "integer", minimum: 1 });
export const str = (): Shape<string> => shape({ type: "string" });
export const bool = (): Shape<boolean> => shape({ type: "boolean" });
export const literal = <const L extends string>(...values: L[]): Shape<L> => shape(values.length === 1 ? { const: values[0] } : { enum: values });

export const nullable = <T>(s: Shape<T>): Shape<T | null> => shape({ anyOf: [s.json, { type: "null" }] }, s.numeric);
export const array = <T>(items: Shape<T>, extra: JsonSchema = {}): Shape<T[]> => shape({ type: "array", items: items.json, ...extra });
export const pair = <A, B>(a: Shape<A>, b: Shape<B>): Shape<[A, B]> => shape({ type: "array", prefixItems: [a.json, b.json], items: false, minItems: 2 });
/** A map with free keys and values of one shape. */
export const record = <T>(values: Shape<T>): Shape<Record<string, T>> => shape({ type: "object", additionalProperties: values.json });
/** An object whose keys are not ours to close (the run's options, the server's own description). */
export const openObject = (): Shape<Record<string, unknown>> => shape({ type: "object" });

/** A nested field: its shape and what it means (unit included where it has one). */
export interface Field<T = unknown> {
  readonly shape: Shape<T>;
  readonly doc: string;
  readonly optional?: true;
}
export function field<T>(s: Shape<T>, doc: string): Field<T>;
/** A field the object may leave out (typed optional, not in the schema's `required`). */
export function field<T>(s: Shape<T>, doc: string, optional: true): Field<T> & { readonly optional: true };
export function field<T>(s: Shape<T>, doc: string, optional?: true): Field<T> {
  return optional ? { shape: s, doc, optional } : { shape: s, doc };
}

type Fields = Record<string, Field>;
type Required<F extends Fields> = { [K in keyof F as F[K]["optional"] extends true ? never : K]: TypeOf<F[K]["shape"]> };
type Optional<F extends Fields> = { [K in keyof F as F[K]["optional"] extends true ? K : never]?: TypeOf<F[K]["shape"]> };
type Flat<T> = { [K in keyof T]: T[K] };
export type ObjectOf<F extends Fields> = Flat<Required<F> & Optional<F>>;

/** A closed object: exactly these keys (the optional ones may be absent), nothing else. */
export function object<F extends Fields>(fields: F): Shape<ObjectOf<F>> {
  const properties: Record<string, JsonSchema> = {};
  for (const [name, f] of Object.entries(fields)) properties[name] = { ...f.shape.json, description: f.doc };
  const required = Object.entries(fields)
    .filter(([, f]) => !f.optional)
    .map(([name]) => name);
  return shape({ type: "object", properties, required, additionalProperties: false });
}
