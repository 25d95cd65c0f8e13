/**
 * The strict check that citty lacks (it silently accepts unknown flags), with argparse's unambiguous abbreviations,
 * so every command line the script accepts, warmbench accepts too (`--num-p 8` is `--num-prompts 8`).
 */
import type { ArgsDef } from "citty";
import { UsageError } from "../errors.ts";

/**
 * Checks every flag against `defs` and returns argv with abbreviations expanded (argparse accepts any unambiguous
 * prefix of a long option; an exact name always wins). Rejects unknown or ambiguous flags and stray positional
 * arguments, naming the first culprit. Accepts --flag value, --flag=value, and --no-flag for booleans.
 */
export function normalizeFlags(argv: string[], defs: ArgsDef, opts: { variadic?: boolean; repeatable?: ReadonlySet<string> } = {}): string[] {
  const positionals = opts.variadic ? Infinity : Object.values(defs).filter((a) => a.type === "positional").length;
  const names = Object.keys(defs).filter((n) => defs[n]!.type !== "positional");
  const out: string[] = [];
  const repeated = new Map<string, string[]>();
  let tail: string[] = [];
  let seenPositionals = 0;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--") {
      tail = argv.slice(i);
      break;
    }
    if (!arg.startsWith("-") || /^-\d/.test(arg)) {
      if (++seenPositionals > positionals) throw new UsageError(`unexpected argument "${arg}"`);
      out.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const given = (eq < 0 ? arg : arg.slice(0, eq)).replace(/^-{1,2}/, "");
    const name = resolveName(given, names, defs, arg);
    const def = defs[name.startsWith("no-") && !defs[name] ? name.slice(3) : name]!;
    const value = eq < 0 ? undefined : arg.slice(eq + 1);
    if (def.type === "boolean") {
      if (value !== undefined) throw new UsageError(`--${name} takes no value`);
      out.push(`--${name}`);
      continue;
    }
    const flagValue = value ?? argv[i + 1];
    if (flagValue === undefined) throw new UsageError(`--${name}: expects a value`);
    if (opts.repeatable?.has(name)) repeated.set(name, [...(repeated.get(name) ?? []), flagValue]);
    else if (value !== undefined) out.push(`--${name}=${value}`);
    else out.push(`--${name}`, flagValue);
    if (value === undefined) i++;
  }
  for (const [name, values] of repeated) out.push(`--${name}=${values.join("\n")}`);
  return [...out, ...tail];
}

/** The full flag name for `given`: exact, --no-<boolean>, or the one flag it abbreviates. */
function resolveName(given: string, names: string[], defs: ArgsDef, arg: string): string {
  if (defs[given] && defs[given]!.type !== "positional") return given;
  if (given.startsWith("no-") && defs[given.slice(3)]?.type === "boolean") return given;
  const flag = arg.split("=")[0];
  const matches = given.length > 0 ? names.filter((n) => n.startsWith(given)) : [];
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) {
    throw new UsageError(`ambiguous flag "${flag}" could match ${matches.map((m) => `--${m}`).join(", ")}`);
  }
  throw new UsageError(`unknown flag "${flag}" (see --help)`);
}
