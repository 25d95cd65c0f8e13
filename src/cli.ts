#!/usr/bin/env bun
/**
 * warmbench's command line: routes to run (default), mock, demo and report; maps outcomes to exit codes
 * (README "Exit codes"). Logs on stderr, the report on stdout.
 */
import "./no-color.ts";
import { defineCommand, parseArgs, showUsage, type ArgsDef, type CommandDef } from "citty";
import { readFileSync } from "node:fs";
import { BenchError, EXIT, UsageError } from "./errors.ts";
import { log } from "./log.ts";
import { parseRunOptions, type RawFlags, type RunOptions } from "./options.ts";
import { MOCK_ARGS, parseMockOptions } from "./mock/options.ts";
import { DEMO_ARGS, normalizeFlags, REPORT_ARGS, RUN_ARGS } from "./cli-args.ts";
import { runSweep, type SweepOutcome } from "./sweep/run-sweep.ts";
import { runInFlightLimit } from "./sweep/plan.ts";
import { renderJsonlReport } from "./report/console.ts";
import { relaunchWithFetchCap } from "./relaunch.ts";
import { VERSION } from "./version.ts";
import { createInterrupt } from "./interrupt.ts";

const COMMANDS: Record<string, { args: ArgsDef; description: string }> = {
  run: { args: RUN_ARGS, description: "Run the warm-cache sweep against a server (default command)" },
  mock: { args: MOCK_ARGS, description: "Start an SGLang-compatible mock server (no GPU needed)" },
  demo: { args: DEMO_ARGS, description: "Run a short sweep against a mock server started for it, with a bundled tokenizer" },
  report: { args: REPORT_ARGS, description: "Re-render the console report from a JSONL results file" },
};

const usageOf = (name: string): CommandDef =>
  defineCommand({ meta: { name, description: COMMANDS[name]?.description }, args: COMMANDS[name]?.args });
const mainUsage = defineCommand({
  meta: { name: "warmbench", version: VERSION, description: "Warm-cache (prefix-cache) benchmark for LLM serving engines" },
  subCommands: Object.fromEntries(Object.keys(COMMANDS).map((n) => [n, usageOf(n)])),
});

const write = (text: string) => process.stdout.write(text.endsWith("\n") ? text : text + "\n");

/** Flags that would silently do nothing in the demo, which brings its own server. */
const DEMO_REFUSED = ["--base-url", "--host", "--port"];

async function main(argv: string[]): Promise<number> {
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
    write(VERSION);
    return EXIT.ok;
  }
  if (argv.length === 0 || (argv.length === 1 && (argv[0] === "--help" || argv[0] === "-h"))) {
    await showUsage(mainUsage);
    return argv.length === 0 ? EXIT.usage : EXIT.ok;
  }
  const named = argv[0] !== undefined && argv[0] in COMMANDS;
  const command = named ? (argv[0] as string) : "run";
  const rest = named ? argv.slice(1) : argv;
  const spec = COMMANDS[command] as (typeof COMMANDS)[string];
  if (rest.includes("--help") || rest.includes("-h")) {
    await showUsage(usageOf(command), mainUsage);
    return EXIT.ok;
  }
  if (command === "demo") {
    const refused = rest.find((a) => DEMO_REFUSED.includes(a.split("=")[0]!));
    if (refused) throw new UsageError(`${refused.split("=")[0]}: the demo runs against its own mock server; use \`warmbench run ${refused.split("=")[0]} ...\` for yours`);
  }
  const raw = parseFlags(command, normalizeFlags(rest, spec.args), spec.args);
  if (raw.verbose === true) log.level = 4;

  if (command === "mock") {
    const { runMockServer } = await import("./mock/main.ts");
    return runMockServer(parseMockOptions(raw));
  }
  if (command === "report") return report(raw);

  if (command === "demo") {
    const { demoOptions, startDemoMock } = await import("./demo.ts");
    // Validate (against a placeholder URL) and relaunch before the demo's mock exists, so it starts once.
    const relaunched = await relaunchWithFetchCap(runInFlightLimit(demoOptions(raw, "http://127.0.0.1:1")));
    if (relaunched !== null) return relaunched;
    const mock = await startDemoMock();
    try {
      return await sweep(demoOptions(raw, mock.url));
    } finally {
      await mock.stop();
    }
  }
  // Validate before relaunching, so bad flags fail fast and once.
  const opts = parseRunOptions(raw);
  const relaunched = await relaunchWithFetchCap(runInFlightLimit(opts));
  if (relaunched !== null) return relaunched;
  return sweep(opts);
}


/** citty's own complaints (a missing positional) are usage errors too. */
function parseFlags(command: string, argv: string[], defs: ArgsDef): RawFlags & { _: string[] } {
  try {
    return parseArgs(argv, defs) as unknown as RawFlags & { _: string[] };
  } catch (err) {
    const what = command === "report" ? "expects a JSONL results file (warmbench report FILE)" : (err as Error).message;
    throw new UsageError(`${command}: ${what}`);
  }
}

/** `warmbench report FILE`: the console report rebuilt from the file alone. */
function report(raw: RawFlags & { _: string[] }): number {
  const file = typeof raw.file === "string" ? raw.file : undefined;
  if (file === undefined) throw new UsageError("report: expects a JSONL results file (warmbench report FILE)");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new UsageError(`report: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
  write(renderJsonlReport(text, file));
  return EXIT.ok;
}

/** Runs the sweep with SIGINT/SIGTERM wired to its interrupt, and turns its outcome into the exit code. */
async function sweep(opts: RunOptions): Promise<number> {
  const interrupt = createInterrupt({ warn: (m) => log.warn(m), exit: (code) => process.exit(code) });
  process.on("SIGINT", interrupt.onSignal);
  process.on("SIGTERM", interrupt.onSignal);
  const outcome: SweepOutcome = await runSweep(opts, { out: write, signal: interrupt.signal });
  return exitCodeOf(outcome, opts);
}

/** The first that applies, in the README's order: 130, 4, 5, 3, 0. */
function exitCodeOf(outcome: SweepOutcome, opts: RunOptions): number {
  if (outcome.interrupted) return EXIT.interrupted;
  if (outcome.cacheFailures > 0) {
    log.error(`--verify-cache strict: the cache check failed for ${outcome.cacheFailures} pct(s): exit code ${EXIT.cacheMismatch}`);
    return EXIT.cacheMismatch;
  }
  if (outcome.saturatedPcts > 0 && opts.strict) {
    log.error(`--strict: the client was saturated during ${outcome.saturatedPcts} pct(s): exit code ${EXIT.clientSaturated}`);
    return EXIT.clientSaturated;
  }
  if (outcome.failedRequests > 0) {
    log.warn(`${outcome.failedRequests} measured request(s) failed: exit code ${EXIT.requestsFailed}`);
    return EXIT.requestsFailed;
  }
  return EXIT.ok;
}

const verbose = process.argv.includes("--verbose");
try {
  const code = await main(process.argv.slice(2));
  process.exitCode = code;
} catch (err) {
  if (err instanceof UsageError || err instanceof BenchError) {
    process.stderr.write(`warmbench: error: ${err.message}\n`);
    if (verbose) process.stderr.write(`${err.stack}\n`);
    process.exitCode = err.exitCode;
  } else {
    process.stderr.write(`warmbench: internal error: ${(err as Error)?.message ?? err}\n`);
    if (verbose) process.stderr.write(`${(err as Error)?.stack}\n`);
    else process.stderr.write("(run with --verbose for the stack trace)\n");
    process.exitCode = EXIT.runtime;
  }
}
// Pending timers or sockets (e.g. a cancelled stream) must not keep a finished run alive.
process.exit(process.exitCode ?? 0);
