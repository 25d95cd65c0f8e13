/**
 * Every command's flags from the declarations (the client's in config/flags, the mock's in src/mock): citty's args
 * (and with them `--help`), the strict name check, and the refusals. Nothing here knows a flag by name.
 */
import type { ArgsDef } from "citty";
import { CLIENT_FLAGS, defaultText, flagsFor } from "../config/flags/index.ts";
import { REFUSED_FLAGS } from "../config/flags/measure.ts";
import type { CommandName, FlagDecl, FlagSpec } from "../config/flags/types.ts";
import { UsageError } from "../errors.ts";
import { MOCK_FLAGS } from "../mock/options.ts";
import { normalizeFlags } from "./normalize.ts";

const MOCK_DECLS: FlagDecl[] = MOCK_FLAGS.map((f) => ({ name: f.name, type: f.type, help: f.help, default: f.default, commands: { mock: true } }));

/** Every flag of every command, each declared once. */
export const ALL_FLAGS: readonly FlagDecl[] = [...CLIENT_FLAGS, ...MOCK_DECLS];

/** The flags `command` takes, as it shows them. */
export const flagsOf = (command: CommandName): FlagSpec[] => flagsFor(ALL_FLAGS, command);

/** The text after a flag in `--help`: its help, then its default. */
function describeFlag(f: FlagSpec): string {
  const dflt = defaultText(f);
  return dflt === "" ? f.help : `${f.help} (default: ${dflt})`;
}

/**
 * citty's args of `command`. Defaults stay out of citty's own `default` (they are in the description): the parsers
 * must see whether a flag was given (--num-prompts with --duration is refused, --burstiness needs a rate).
 */
export function argsOf(command: CommandName): ArgsDef {
  const args: ArgsDef = {};
  for (const f of flagsOf(command)) {
    if (f.type === "positional") args[f.name] = { type: "positional", description: f.help, required: f.optional !== true };
    else if (f.type === "boolean") args[f.name] = { type: "boolean", description: describeFlag(f) };
    else args[f.name] = { type: "string", description: describeFlag(f), ...(f.choices ? { valueHint: f.choices.join("|") } : {}) };
  }
  return args;
}

/**
 * `argv` (the command's part) checked against its declarations and with abbreviations expanded, ready for citty;
 * a refused, unknown or ambiguous flag is one UsageError naming it.
 */
export function checkedArgv(command: CommandName, argv: string[]): string[] {
  for (const refused of REFUSED_FLAGS.filter((r) => r.commands.includes(command))) {
    if (argv.some((a) => a === `--${refused.name}` || a.startsWith(`--${refused.name}=`))) throw new UsageError(`--${refused.name}: ${refused.reason}`);
  }
  const flags = flagsOf(command);
  const normalized = normalizeFlags(argv, argsOf(command), {
    variadic: flags.some((f) => f.variadic === true),
    repeatable: new Set(flags.filter((f) => f.repeatable === true).map((f) => f.name)),
  });
  checkCrossFlagRules(flags, normalized);
  return normalized;
}

/** The declared cross-flag rules (FlagSpec.requires, .conflicts) on the given flags: the first broken one is a UsageError. */
export function checkCrossFlagRules(flags: readonly FlagSpec[], argv: readonly string[]): void {
  const given = (name: string) => argv.some((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  for (const f of flags) {
    if (!given(f.name)) continue;
    if (f.requires !== undefined && !given(f.requires)) throw new UsageError(`--${f.name}: only --${f.requires} reads it (add --${f.requires})`);
    for (const [other, why] of Object.entries(f.conflicts ?? {})) {
      if (given(other)) throw new UsageError(`--${f.name}: not with --${other}: ${why}`);
    }
  }
}
