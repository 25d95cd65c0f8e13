/**
 * How a declaration binds a flag to an option field: `bindTo<Options>()` gives the command's `to(field, parser)`,
 * whose parser the compiler holds to the field's type, so a declaration cannot fill a field wrong.
 */
import type { FlagBinding } from "./types.ts";

export const bindTo =
  <Options>() =>
  <K extends keyof Options & string>(field: K, value: (text: string, flag: string) => Options[K], shapesWorkload = false): FlagBinding => ({
    field,
    value,
    ...(shapesWorkload ? { shapesWorkload: true as const } : {}),
  });

/** A declared choice's value (the generic parser has checked it is one of `choices`). */
export const chosen =
  <T extends string>(_choices: readonly T[]) =>
  (text: string): T =>
    text as T;
