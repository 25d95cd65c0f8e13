/** What every warmbench command shares: citty's definition from the declarations, --verbose, the exit code. */
import { escapeControls } from "../terminal-text.ts";
import { defineCommand, type CommandDef } from "citty";
import { COMMAND_DESCRIPTIONS, type CommandName } from "../config/flags/types.ts";
import type { RawFlags } from "../config/flag-values.ts";
import { log } from "../log.ts";
import { argsOf } from "./flags.ts";

/** Raw flags as citty parsed them, positionals in `_`. */
export type ParsedFlags = RawFlags & { _: string[] };

/** A command's body: the flags in, the exit code out. */
export type CommandRun = (flags: ParsedFlags) => Promise<number>;

/** Set while stdout holds more than its pipe took: resolved at its drain (or when its reader has gone). */
let pending: Promise<void> | null = null;

/** The report on stdout, one newline at the end. */
export const write = (text: string): void => {
  const safe = escapeControls(text);
  if (process.stdout.write(safe.endsWith("\n") ? safe : safe + "\n") || pending !== null) return;
  pending = new Promise((resolve) => {
    const done = (): void => {
      pending = null;
      resolve();
    };
    process.stdout.once("drain", done);
    process.stdout.once("error", done);
  });
};

/** Resolves once all the report written has left for stdout: the entry point waits for it before it exits. */
export const stdoutDrained = (): Promise<void> => pending ?? Promise.resolve();

/** --verbose, for every command that takes it: debug logs (stack traces are the entry point's). */
const verbose = {
  name: "verbose",
  setup: (ctx: { args: Record<string, unknown> }): void => {
    if (ctx.args.verbose === true) log.level = 4;
  },
};

/**
 * The citty command `name`: its description and args from the declarations (so `--help` needs nothing else), its
 * body loaded by `load` only when it runs (one file per command, src/cli/<command>.ts).
 */
export function warmbenchCommand(name: CommandName, load: () => Promise<CommandRun>): CommandDef {
  return defineCommand({
    meta: { name, description: COMMAND_DESCRIPTIONS[name] },
    args: argsOf(name),
    plugins: [verbose],
    run: async ({ args }) => {
      const run = await load();
      process.exitCode = await run(args as unknown as ParsedFlags);
    },
  });
}
