/**
 * How a declaration binds a flag to an option field: `bindTo<Options>()` gives the command's `to(field, parser)`
 * (and `to.raw(field, parse)`, where the flag's text alone is not enough), whose parser the compiler holds to the
 * field's type, so a declaration cannot fill a field wrong; the binding keeps the field's name and type, from which
 * the generic parser's result is typed (config/flags/bound.ts).
 */
import type { RawFlags } from "../flag-values.ts";
import type { FlagBinding } from "./types.ts";

type Env = Record<string, string | undefined>;

/** A binding whose field is its flag's text (or the default) through `value`. */
type ValueBinding<F extends string, V> = FlagBinding<F, V> & { value: (text: string, flag: string) => V };
/** A binding whose field `parse` reads from the raw flags (and the environment). */
type ParseBinding<F extends string, V> = FlagBinding<F, V> & { parse: (raw: RawFlags, env: Env) => V };

const shaping = (shapesWorkload: boolean) => (shapesWorkload ? { shapesWorkload: true as const } : {});

export const bindTo = <Options>() =>
  Object.assign(
    <K extends keyof Options & string>(field: K, value: (text: string, flag: string) => Options[K], shapesWorkload = false): ValueBinding<K, Options[K]> => ({
      field,
      value,
      ...shaping(shapesWorkload),
    }),
    {
      raw: <K extends keyof Options & string>(
        field: K,
        parse: (raw: RawFlags, env: Env) => Options[K],
        shapesWorkload = false,
      ): ParseBinding<K, Options[K]> => ({
        field,
        parse,
        ...shaping(shapesWorkload),
      }),
    },
  );

/**
 * A binding whose field's type is its parser's, where the option type that holds the field lives above this layer
 * (replay's, the passport's): the command's parser is held to that type where it builds the options.
 */
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
