/**
 * The shape of one flag declaration. Every flag of every command is declared once, in this shape; citty's args, the
 * `--help` text, the strict name check and docs/reference/flags.md are all generated from the declarations.
 */

import type { RawFlags } from "../flag-values.ts";

/** The commands of `warmbench`, in the order `--help` and the docs list them. */
export const COMMAND_NAMES = ["run", "demo", "multiturn", "capacity", "replay", "passport", "mock", "report", "compare", "merge", "history", "schema"] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];

/** What each command does: its line in `--help` and in docs/reference/flags.md, known without loading the command. */
export const COMMAND_DESCRIPTIONS: Readonly<Record<CommandName, string>> = {
  run: "Run the warm-cache sweep against a server (default command)",
  demo: "Run a short sweep against a mock server started for it, with a bundled tokenizer",
  multiturn: "Run multi-turn conversations that grow turn by turn, and report each round's cache hits",
  capacity: "Find the highest load at which every --gate holds, per shared-prefix %, the cache controlled in every probe",
  replay: "Replay a Mooncake-format trace with token-exact prefixes, every request's cache hit predicted and checked (--analyze: no server)",
  passport: "Measure the server's cache geometry from outside: page size, capacity, tiers, eviction order, whether answers are cached, llama.cpp slots",
  mock: "Start an SGLang-compatible mock server (no GPU needed)",
  report: "Re-render the console report of JSONL results files, or write one HTML/Markdown report of many runs",
  compare: "Compare two runs pct by pct, with regression limits (exit 7 when one is exceeded)",
  merge: "Merge the results of runs that were not coordinated (several clients started by hand)",
  history: "Keep runs in a SQLite history (add FILES, list, show METRIC) for compare history:last-green",
  schema: "Print the JSON Schema (draft 2020-12) of the JSONL line format",
};

/** What a flag is for one command: name, kind, help and the default shown (and parsed when the flag is absent). */
export interface FlagSpec {
  /** kebab-case, without the dashes. */
  name: string;
  type: "string" | "boolean" | "positional";
  help: string;
  /** Printed as "(default: X)"; the parsers read the same value when the flag is not given. */
  default?: string | number | null;
  /** The values the flag accepts, when they are a fixed list (printed in the help, checked by the parser). */
  choices?: readonly string[];
  /** May be given more than once: the values reach the parser joined by newlines. */
  repeatable?: boolean;
  /** Positional: more than one may be given (files...). */
  variadic?: boolean;
  /** Positional: may be left out (the command says what it needs instead: report FILES... beside --history). */
  optional?: boolean;
  /** A flag this one means nothing without: given alone, it is refused naming both (a declared cross-flag rule). */
  requires?: string;
  /** Flags this one cannot be given with, and why (declared cross-flag rules). */
  conflicts?: Readonly<Record<string, string>>;
}

/** What differs for one command from the flag's common declaration (its binding too: another field or check). */
type FlagOverride = Partial<Pick<FlagSpec, "help" | "default" | "choices" | "optional" | "conflicts">> & { bind?: FlagBinding };

/** Raw flag values as citty hands them over (strings, booleans; repeated flags joined by newlines). */
type FlagValues = RawFlags;

/**
 * A flag bound to the option it fills: the field, how its value (or its absence) becomes the field's value, and
 * whether it shapes the workload (every process of a sharded run must agree on it: the shards' workload hash is made
 * of these fields). One declaration is then the flag's name, help, default, parser and field; the field's type is the
 * parser's (`V`), so the options a command's flags fill are typed from the declarations (config/flags/bound.ts).
 */
export interface FlagBinding<F extends string = string, V = unknown> {
  field: F;
  /**
   * The flag's text as the command has it - given, else the command's declared default - into the field's value
   * (neither: the field is null, and this is not called). Declared choices are checked before (config/flags/bound.ts).
   */
  value?: (text: string, flag: string) => V;
  /** Where the flag's text alone is not enough (a switch; an environment variable beside it). */
  parse?: (raw: FlagValues, env: Record<string, string | undefined>) => V;
  shapesWorkload?: true;
}

/** A flag and the commands that take it (`true`: as declared; an object: with that command's help or default). */
export interface FlagDecl extends FlagSpec {
  commands: Partial<Record<CommandName, true | FlagOverride>>;
  bind?: FlagBinding;
  /**
   * Commands that take no such flag, yet whose options hold its bound field: there the field is what the declaration
   * makes of this text, as if it were given (null: as if the flag were absent - its declared default), in every run.
   */
  fixed?: Partial<Record<CommandName, string | null>>;
}

/** A flag a command refuses by name with a reason (it would otherwise do nothing there); not in its help. */
export interface RefusedFlag {
  name: string;
  commands: readonly CommandName[];
  reason: string;
}
