#!/usr/bin/env bun
/**
 * warmbench's entry point: runs the command line (cli/main.ts) and maps what escapes it to an exit code
 * (docs/reference/exit-codes.md): one line on stderr, the stack only with --verbose. Logs on stderr, the report on
 * stdout.
 */
import "./no-color.ts";
import { BenchError, EXIT, UsageError } from "./errors.ts";
import { stdoutDrained } from "./cli/command.ts";
import { main } from "./cli/main.ts";
import { escapeControls } from "./terminal-text.ts";

const verbose = process.argv.includes("--verbose");
try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  if (err instanceof UsageError || err instanceof BenchError) {
    process.stderr.write(`warmbench: error: ${escapeControls(err.message)}\n`);
    if (verbose) process.stderr.write(`${err.stack}\n`);
    process.exitCode = err.exitCode;
  } else {
    process.stderr.write(`warmbench: internal error: ${escapeControls(String((err as Error)?.message ?? err))}\n`);
    if (verbose) process.stderr.write(`${(err as Error)?.stack}\n`);
    else process.stderr.write("(run with --verbose for the stack trace)\n");
    process.exitCode = EXIT.runtime;
  }
}
// What is still buffered for a pipe a slow reader drains (a 224 KB schema, a report) is written out first:
// process.exit drops it, and such a reader got the first 64 KB only.
await stdoutDrained();
// Pending timers or sockets (e.g. a cancelled stream) must not keep a finished run alive.
process.exit(process.exitCode ?? 0);
