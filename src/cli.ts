#!/usr/bin/env bun
/**
 * warmbench's command line: routes to run (default), mock, demo and report; maps outcomes to exit codes
 * (README "Exit codes"). Logs on stderr, the report on stdout.
 */
import "./no-color.ts";
import { defineCommand, parseArgs, showUsage, type ArgsDef, type CommandDef } from "citty";
import { BenchError, EXIT, UsageError } from "./errors.ts";
import { log } from "./log.ts";
import { parseRunOptions, type RawFlags } from "./cli/options.ts";
import { multiturnInFlight, type RunOptions } from "./config/options.ts";
import { MOCK_ARGS, parseMockOptions } from "./mock/options.ts";
import { addFinishedRun, historyTarget } from "./cli/history-command.ts";
import { COMPARE_ARGS, DEMO_ARGS, HISTORY_ARGS, MERGE_ARGS, MULTITURN_ARGS, normalizeFlags, REPORT_ARGS, RUN_ARGS } from "./cli/args.ts";
import { runSweep, type SweepOutcome } from "./sweep/run-sweep.ts";
import { runInFlightLimit } from "./sweep/plan.ts";
import { relaunchWithFetchCap } from "./cli/relaunch.ts";
import { VERSION } from "./version.ts";
import { createInterrupt } from "./interrupt.ts";
import { formatCell } from "./report/text-table.ts";
import { resolvePlacement, WORKER_ENV } from "./shard/placement.ts";
import { runShardWorker } from "./sweep/shard-worker.ts";
import { cpus } from "node:os";
import { gateFailures, type GateFailure } from "./gates/evaluate.ts";

const COMMANDS: Record<string, { args: ArgsDef; description: string; variadic?: boolean }> = {
  run: { args: RUN_ARGS, description: "Run the warm-cache sweep against a server (default command)" },
  multiturn: { args: MULTITURN_ARGS, description: "Run multi-turn conversations that grow turn by turn, and report each round's cache hits" },
  mock: { args: MOCK_ARGS, description: "Start an SGLang-compatible mock server (no GPU needed)" },
  demo: { args: DEMO_ARGS, description: "Run a short sweep against a mock server started for it, with a bundled tokenizer" },
  report: {
    args: REPORT_ARGS,
    description: "Re-render the console report of JSONL results files, or write one HTML/Markdown report of many runs",
    variadic: true,
  },
  compare: { args: COMPARE_ARGS, description: "Compare two runs pct by pct, with regression limits (exit 7 when one is exceeded)" },
  merge: {
    args: MERGE_ARGS,
    description: "Merge the results of runs that were not coordinated (several clients started by hand)",
    variadic: true,
  },
  history: {
    args: HISTORY_ARGS,
    description: "Keep runs in a SQLite history (add FILES, list, show METRIC) for compare history:last-green",
    variadic: true,
  },
  schema: { args: {}, description: "Print the JSON Schema (draft 2020-12) of the JSONL line format" },
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
  const raw = parseFlags(command, normalizeFlags(rest, spec.args, { variadic: spec.variadic }), spec.args);
  if (raw.verbose === true) log.level = 4;

  if (command === "mock") {
    const { runMockServer } = await import("./mock/main.ts");
    return runMockServer(parseMockOptions(raw));
  }
  if (command === "report") {
    const { reportCommand } = await import("./cli/report-command.ts");
    return reportCommand(raw, write);
  }
  if (command === "compare") {
    const { compareCommand } = await import("./cli/compare-command.ts");
    return compareCommand(raw, write);
  }
  if (command === "merge") {
    const { mergeCommand } = await import("./cli/merge-command.ts");
    return mergeCommand(raw);
  }
  if (command === "history") {
    const { historyCommand } = await import("./cli/history-command.ts");
    return historyCommand(raw, write);
  }
  if (command === "multiturn") return multiturn(raw);
  if (command === "schema") {
    const { lineSchemaText } = await import("./schema/document.ts");
    write(lineSchemaText());
    return EXIT.ok;
  }

  if (command === "demo") {
    const { demoOptions, startDemoMock, DEMO_MOCK_URL_ENV } = await import("./cli/demo.ts");
    const coordinatorsMock = process.env[DEMO_MOCK_URL_ENV];
    if (coordinatorsMock !== undefined && process.env[WORKER_ENV.rank] !== undefined) return sweep(demoOptions(raw, coordinatorsMock));
    // Validate (against a placeholder URL) and relaunch before the demo's mock exists, so it starts once.
    const planned = demoOptions(raw, "http://127.0.0.1:1");
    const relaunched = await relaunchWithFetchCap(runInFlightLimit(planned));
    if (relaunched !== null) return relaunched;
    const mock = await startDemoMock({ chat: planned.endpoint === "chat" });
    // Local workers inherit this environment.
    process.env[DEMO_MOCK_URL_ENV] = mock.url;
    try {
      return await sweep(demoOptions(raw, mock.url));
    } finally {
      await mock.stop();
    }
  }
  // Validate before relaunching, so bad flags fail fast and once.
  const opts = parseRunOptions(raw);
  const history = historyTarget(raw);
  const relaunched = await relaunchWithFetchCap(runInFlightLimit(opts));
  if (relaunched !== null) return relaunched;
  return sweep(opts, history);
}


/** citty's own complaints (a missing positional) are usage errors too. */
function parseFlags(command: string, argv: string[], defs: ArgsDef): RawFlags & { _: string[] } {
  try {
    return parseArgs(argv, defs) as unknown as RawFlags & { _: string[] };
  } catch (err) {
    const what =
      command === "report"
        ? "expects a JSONL results file (warmbench report FILE...)"
        : command === "compare"
          ? "expects two JSONL results files (warmbench compare BASE.jsonl NEW.jsonl)"
          : (err as Error).message;
    throw new UsageError(`${command}: ${what}`);
  }
}

/** Runs the sweep (or this process's shard of it) with SIGINT/SIGTERM wired to its interrupt; returns the exit code. */
async function sweep(opts: RunOptions, historyDb: string | null = null): Promise<number> {
  const placement = resolvePlacement(
    { workers: opts.workers, shard: opts.shard, coordinator: opts.coordinator, inFlight: runInFlightLimit(opts) },
    process.env,
    cpus().length,
  );
  const interrupt = createInterrupt({ warn: (m) => log.warn(m), exit: (code) => process.exit(code) });
  if (placement.kind === "worker" || (placement.kind === "shard" && placement.rank > 0)) {
    // A local worker shares the terminal's process group: its coordinator relays a Ctrl-C as a stop message.
    process.on("SIGINT", placement.kind === "worker" ? () => {} : interrupt.onSignal);
    process.on("SIGTERM", interrupt.onSignal);
    if (placement.kind === "worker") log.level = 1;
    return runShardWorker(opts, placement, interrupt.signal);
  }
  process.on("SIGINT", interrupt.onSignal);
  process.on("SIGTERM", interrupt.onSignal);
  const outcome: SweepOutcome = await runSweep(opts, { out: write, signal: interrupt.signal }, placement);
  if (historyDb !== null) addFinishedRun(historyDb, outcome.records, outcome.interrupted, opts.outputFile ?? null);
  return exitCodeOf(outcome, opts);
}

/** `warmbench multiturn`: validate, place this process, relaunch for a large concurrency, run with the interrupt wired, exit code. */
async function multiturn(raw: RawFlags): Promise<number> {
  const { parseMultiturnOptions } = await import("./cli/multiturn-options.ts");
  const { runMultiturn } = await import("./multiturn/run-multiturn.ts");
  const opts = parseMultiturnOptions(raw);
  const placement = resolvePlacement({ workers: opts.workers, shard: opts.shard, coordinator: opts.coordinator, inFlight: multiturnInFlight(opts) }, process.env, cpus().length);
  const size = placement.kind === "single" ? 1 : placement.size;
  if (size > opts.numClients) {
    throw new UsageError(`--${opts.shard !== null ? "shard" : "workers"}: ${size} processes for --num-clients ${opts.numClients}: each process drives at least one conversation`);
  }
  const interrupt = createInterrupt({ warn: (m) => log.warn(m), exit: (code) => process.exit(code) });
  if (placement.kind === "worker" || (placement.kind === "shard" && placement.rank > 0)) {
    const { runMultiturnShard } = await import("./multiturn/shard-worker.ts");
    // A local worker shares the terminal's process group: its coordinator relays a Ctrl-C as a stop message.
    process.on("SIGINT", placement.kind === "worker" ? () => {} : interrupt.onSignal);
    process.on("SIGTERM", interrupt.onSignal);
    if (placement.kind === "worker") log.level = 1;
    return runMultiturnShard(opts, placement, interrupt.signal);
  }
  const relaunched = await relaunchWithFetchCap(multiturnInFlight(opts));
  if (relaunched !== null) return relaunched;
  process.on("SIGINT", interrupt.onSignal);
  process.on("SIGTERM", interrupt.onSignal);
  const outcome = await runMultiturn(opts, { out: write, signal: interrupt.signal }, placement);
  return exitCodeFor(
    {
      interrupted: outcome.interrupted, cacheFailures: outcome.cacheFailures, saturated: outcome.saturatedRounds, failedRequests: outcome.failedRequests,
      gateFailures: gateFailures(outcome.rounds),
    },
    opts.strict,
    "round",
  );
}

/**
 * The first that applies, in the README's order: 130, 4, 5, 6, 3, 0. A measurement that cannot be trusted (4, 5)
 * outranks a verdict on it (6); a verdict the user asked for outranks failed requests alone (3).
 */
function exitCodeOf(outcome: SweepOutcome, opts: RunOptions): number {
  return exitCodeFor(
    { interrupted: outcome.interrupted, cacheFailures: outcome.cacheFailures, saturated: outcome.saturatedPcts, failedRequests: outcome.failedRequests, gateFailures: outcome.gateFailures },
    opts.strict,
    "pct",
  );
}

interface Verdicts {
  interrupted: boolean;
  cacheFailures: number;
  saturated: number;
  failedRequests: number;
  gateFailures: GateFailure[];
}

function exitCodeFor(o: Verdicts, strict: boolean, unit: string): number {
  if (o.interrupted) return EXIT.interrupted;
  if (o.cacheFailures > 0) {
    log.error(`--verify-cache strict: the cache check failed for ${o.cacheFailures} ${unit}(s): exit code ${EXIT.cacheMismatch}`);
    return EXIT.cacheMismatch;
  }
  if (o.saturated > 0 && strict) {
    log.error(`--strict: the client was saturated during ${o.saturated} ${unit}(s): exit code ${EXIT.clientSaturated}`);
    return EXIT.clientSaturated;
  }
  if (o.gateFailures.length > 0) {
    const first = o.gateFailures[0]!;
    log.error(`${o.gateFailures.length} gate verdict(s) failed, first ${first.expr} at ${first.line} (value ${formatCell(first.value)}): exit code ${EXIT.gateFailed}`);
    return EXIT.gateFailed;
  }
  if (o.failedRequests > 0) {
    log.warn(`${o.failedRequests} measured request(s) failed: exit code ${EXIT.requestsFailed}`);
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
