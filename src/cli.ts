#!/usr/bin/env bun
/**
 * warmbench's command line: routes to run (default), mock, demo and report; maps errors to exit codes
 * (2 usage, 1 runtime, 3 some requests failed, 130 interrupted). Logs on stderr, the report on stdout.
 */
import "./no-color.ts";
import { defineCommand, parseArgs, showUsage, type ArgsDef, type CommandDef } from "citty";
import { readFileSync } from "node:fs";
import { BenchError, EXIT, UsageError } from "./errors.ts";
import { log } from "./log.ts";
import { parseRunOptions, type RawFlags } from "./options.ts";
import { MOCK_ARGS, parseMockOptions } from "./mock/options.ts";
import { checkKnownFlags, REPORT_ARGS, RUN_ARGS } from "./cli-args.ts";
import { runSweep, VERSION, type SweepOutcome } from "./run.ts";
import { renderJsonlReport } from "./report/console.ts";
import { relaunchWithFetchCap } from "./relaunch.ts";

const COMMANDS: Record<string, { args: ArgsDef; description: string }> = {
  run: { args: RUN_ARGS, description: "Run the warm-cache sweep against a server (default command)" },
  mock: { args: MOCK_ARGS, description: "Start an SGLang-compatible mock server (no GPU needed)" },
  demo: { args: RUN_ARGS, description: "Run a short sweep against an embedded mock server" },
  report: { args: REPORT_ARGS, description: "Re-render the console report from a JSONL results file" },
};

const usageOf = (name: string): CommandDef =>
  defineCommand({ meta: { name, description: COMMANDS[name]?.description }, args: COMMANDS[name]?.args });
const mainUsage = defineCommand({
  meta: { name: "warmbench", version: VERSION, description: "Warm-cache (prefix-cache) benchmark for LLM serving engines" },
  subCommands: Object.fromEntries(Object.keys(COMMANDS).map((n) => [n, usageOf(n)])),
});

const write = (text: string) => process.stdout.write(text.endsWith("\n") ? text : text + "\n");

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
  checkKnownFlags(rest, spec.args);
  const raw = parseArgs(rest, spec.args) as unknown as RawFlags & { _: string[] };
  if (raw.verbose === true) log.level = 4;

  if (command === "mock") {
    const { runMockServer } = await import("./mock/main.ts");
    return runMockServer(parseMockOptions(raw));
  }
  if (command === "report") {
    const file = String(raw.file);
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      throw new UsageError(`report: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? err}`);
    }
    write(renderJsonlReport(text));
    return EXIT.ok;
  }
  // Validate before relaunching, so bad flags fail fast and once.
  const opts = command === "run" ? parseRunOptions(raw) : null;
  const relaunched = await relaunchWithFetchCap(opts?.maxConcurrency ?? Number(raw["max-concurrency"] ?? 0));
  if (relaunched !== null) return relaunched;

  const interrupt = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    if (interrupt.signal.aborted) process.exit(EXIT.interrupted);
    log.warn(`${sig}: stopping; the current pct is summarized from the requests that completed (again to exit now)`);
    interrupt.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  let outcome: SweepOutcome;
  if (command === "demo") {
    const { runDemo } = await import("./demo.ts");
    outcome = await runDemo(raw, write, interrupt.signal);
  } else {
    outcome = await runSweep(opts!, { out: write, signal: interrupt.signal });
  }
  if (outcome.interrupted) return EXIT.interrupted;
  if (outcome.cacheFailures > 0) {
    log.error(`--verify-cache strict: the cache check failed for ${outcome.cacheFailures} pct(s): exit code ${EXIT.cacheMismatch}`);
    return EXIT.cacheMismatch;
  }
  if (outcome.saturatedPcts > 0 && opts?.strict === true) {
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
