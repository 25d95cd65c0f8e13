/**
 * The type of what the generic parser (bound.ts) fills, from declarations as written: per command, each bound
 * field with its parser's type.
 */
import type { CommandName } from "./types.ts";

/**
 * The binding and the default `C` reads declaration `D` with: as it takes the flag (its override's, else the
 * declaration's), or as the declaration fixes the field for it (the text fixed, else the declaration's default).
 */
type ViewIn<D, C extends CommandName> = D extends { commands: infer Cs }
  ? C extends keyof Cs
    ? {
        bind: Cs[C] extends { bind: infer B } ? B : D extends { bind: infer B } ? B : never;
        dflt: Cs[C] extends { default: infer X } ? X : D extends { default: infer X } ? X : undefined;
      }
    : D extends { fixed: infer Fx; bind: infer B }
      ? C extends keyof Fx
        ? { bind: B; dflt: Fx[C] extends string ? Fx[C] : D extends { default: infer X } ? X : undefined }
        : never
      : never
  : never;

/** The field a view fills and its type: the parser's; a text parser's or null, where nothing is given or defaulted. */
type FieldOf<T> = T extends { bind: infer B; dflt: infer X }
  ? B extends { field: infer F extends string; parse: (...args: never[]) => infer V }
    ? { [K in F]: V }
    : B extends { field: infer F extends string; value: (...args: never[]) => infer V }
      ? { [K in F]: [X] extends [null | undefined] ? V | null : V }
      : never
  : never;

type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;

/**
 * The fields declarations `D` fill for command `C`, each typed by its declaration's parser. Types only, importing no
 * declaration, so an option type takes its fields from the declarations without a cycle (config/options.ts).
 */
export type DeclaredFields<D, C extends CommandName> = C extends CommandName
  ? UnionToIntersection<FieldOf<ViewIn<D, C>>> extends infer O
    ? { [K in keyof O]: O[K] }
    : never
  : never;
