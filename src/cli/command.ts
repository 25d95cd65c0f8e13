/** What every warmbench command shares: citty's definition from the declarations, --verbose, the exit code. */
import { escapeControls } from "../terminal-text.ts";
import { defineCommand, type CommandDef } from "citty";
import type { CommandName } from "../config/flags/types.ts";
import type { RawFlags } from "../config/flag-values.ts";
import { log } from "../log.ts";
import { argsOf } from "./flags.ts";

/** Raw flags as citty parsed them, positionals in `_`. */
export type ParsedFlags = RawFlags & { _: string[] };

/** The report on stdout, one newline at the end. */
export const write = (text: string): void => {
  const safe = escapeControls(text);
  process.stdout.write(safe.endsWith("\n") ? safe : safe + "\n");
};

/** --verbose, for every command that takes it: debug logs (stack traces are the entry point's). */
const verbose = { name: "verbose", setup: (ctx: { args: Record<string, unknown> }) => void (ctx.args.verbose === true && (log.level = 4)) };

/** A citty command `name` whose args come from the declarations and whose `run` result is the exit code. */
export function warmbenchCommand(name: CommandName, description: string, run: (flags: ParsedFlags) => Promise<number> | number): CommandDef {
  return defineCommand({
    meta: { name, description },
    args: argsOf(name),
    plugins: [verbose],
    run: async ({ args }) => {
      process.exitCode = await run(args as unknown as ParsedFlags);
    },
  });
}
