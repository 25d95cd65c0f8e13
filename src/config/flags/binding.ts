/**
 * How a declaration binds a flag to an option field: `bindField(field, parser)` (and `bindField.raw(field, parse)`,
 * where the flag's text alone is not enough). The binding keeps the field's name and its parser's type, and the option
 * types are derived from the declarations (config/flags/declared-fields.ts, config/options.ts): a flag brings its
 * field, typed, to every command that takes it, and the generic parser (bound.ts) fills it.
 */
import type { RawFlags } from "../flag-values.ts";
import type { FlagBinding } from "./types.ts";

type Env = Record<string, string | undefined>;

/** A binding whose field is its flag's text (or the default) through `value`. */
type ValueBinding<F extends string, V> = FlagBinding<F, V> & { value: (text: string, flag: string) => V };
/** A binding whose field `parse` reads from the raw flags (and the environment). */
type ParseBinding<F extends string, V> = FlagBinding<F, V> & { parse: (raw: RawFlags, env: Env) => V };

const shaping = (shapesWorkload: boolean) => (shapesWorkload ? { shapesWorkload: true as const } : {});

/** A binding whose field's type is its parser's (`V`): the option types read it from the declaration. */
export const bindField = Object.assign(
  <const F extends string, V>(field: F, value: (text: string, flag: string) => V, shapesWorkload = false): ValueBinding<F, V> => ({
    field,
    value,
    ...shaping(shapesWorkload),
  }),
  {
    raw: <const F extends string, V>(field: F, parse: (raw: RawFlags, env: Env) => V, shapesWorkload = false): ParseBinding<F, V> => ({
      field,
      parse,
      ...shaping(shapesWorkload),
    }),
  },
);

/** A declared choice's value (the generic parser has checked it is one of `choices`). */
export const chosen =
  <T extends string>(_choices: readonly T[]) =>
  (text: string): T =>
    text as T;
