/**
 * warmbench's command line: one citty command per file (src/cli/<command>.ts) under one root with `run` as its
 * default. Before citty parses, each command line is checked against the command's declarations (citty accepts
 * unknown flags silently) and abbreviations are expanded; citty's own complaints become usage errors (exit 2).
 */
import { defineCommand, runCommand as runCitty, showUsage, type CommandDef } from "citty";
import { COMMAND_NAMES, type CommandName } from "../config/flags/types.ts";
import { EXIT, UsageError } from "../errors.ts";
import { VERSION } from "../version.ts";
import { warmbenchCommand, write } from "./command.ts";
import { checkedArgv } from "./flags.ts";

/** Each command's file is loaded only when that command runs (`--help` and `--version` load none of them). */
export const SUBCOMMANDS: Record<CommandName, CommandDef> = {
  run: warmbenchCommand("run", async () => (await import("./run.ts")).runCommand),
  multiturn: warmbenchCommand("multiturn", async () => (await import("./multiturn.ts")).multiturnCommand),
  capacity: warmbenchCommand("capacity", async () => (await import("./capacity.ts")).capacityCommand),
  replay: warmbenchCommand("replay", async () => (await import("./replay.ts")).replayCommand),
  passport: warmbenchCommand("passport", async () => (await import("./passport.ts")).passportCommand),
  mock: warmbenchCommand("mock", async () => (await import("./mock.ts")).mockCommand),
  demo: warmbenchCommand("demo", async () => (await import("./demo.ts")).demoCommand),
  report: warmbenchCommand("report", async () => (await import("./report.ts")).reportCommand),
  compare: warmbenchCommand("compare", async () => (await import("./compare.ts")).compareCommand),
  merge: warmbenchCommand("merge", async () => (await import("./merge.ts")).mergeCommand),
  history: warmbenchCommand("history", async () => (await import("./history.ts")).historyCommand),
  schema: warmbenchCommand("schema", async () => (await import("./schema.ts")).schemaCommand),
};

export const root = defineCommand({
  meta: { name: "warmbench", version: VERSION, description: "Warm-cache (prefix-cache) benchmark for LLM serving engines" },
  subCommands: SUBCOMMANDS,
  default: "run",
});

/** What a command expects when citty finds a positional missing. */
const POSITIONALS: Partial<Record<CommandName, string>> = {
  report: "expects a JSONL results file (warmbench report FILE...)",
  compare: "expects two JSONL results files (warmbench compare BASE.jsonl NEW.jsonl)",
  merge: "expects two or more JSONL results files (warmbench merge A.jsonl B.jsonl -o M.jsonl)",
  history: "expects add FILES..., list or show [METRIC]",
  replay: "expects a Mooncake-format JSONL trace (warmbench replay TRACE)",
};

const isCommand = (name: string | undefined): name is CommandName => (COMMAND_NAMES as readonly (string | undefined)[]).includes(name);

/** Runs the command line `argv` (without the program); returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
    write(VERSION);
    return EXIT.ok;
  }
  if (argv.length === 0 || (argv.length === 1 && (argv[0] === "--help" || argv[0] === "-h"))) {
    await showUsage(root);
    return argv.length === 0 ? EXIT.usage : EXIT.ok;
  }
  const command: CommandName = isCommand(argv[0]) ? argv[0] : "run";
  const rest = isCommand(argv[0]) ? argv.slice(1) : argv;
  if (rest.includes("--help") || rest.includes("-h")) {
    await showUsage(SUBCOMMANDS[command], root);
    return EXIT.ok;
  }
  const checked = checkedArgv(command, rest);
  process.exitCode = undefined;
  try {
    await runCitty(root, { rawArgs: [command, ...checked] });
  } catch (err) {
    // citty's own errors (a missing positional) carry a code; ours are BenchErrors and pass through.
    if ((err as { name?: string }).name === "CLIError") throw new UsageError(`${command}: ${POSITIONALS[command] ?? (err as Error).message}`);
    throw err;
  }
  return typeof process.exitCode === "number" ? process.exitCode : EXIT.ok;
}
