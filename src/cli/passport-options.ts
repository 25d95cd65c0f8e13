/** Parsing of `warmbench passport` flags: the server target and run's shared flags, then its own. */
import type { PassportOptions } from "../passport/run-passport.ts";
import type { RawFlags } from "../config/flag-values.ts";
import { parseBound } from "../config/flags/bound.ts";
import { parseServerTarget } from "./options.ts";

export function parsePassportOptions(
  raw: RawFlags,
  env: Record<string, string | undefined> = process.env,
): PassportOptions & { outputFile: string | null; quiet: boolean } {
  const target = parseServerTarget(raw);
  // Every field of the passport's flags, parsed from their declarations (config/flags/bound.ts) and typed by them.
  return { ...parseBound("passport", raw, env), ...target };
}
