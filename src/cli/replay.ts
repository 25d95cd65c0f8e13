/**
 * `warmbench replay TRACE`: described with --analyze (no server; replay-analyze.ts), or against a server: flags and the whole trace checked first (exit 2 naming the line before
 * anything is sent), outputs opened, then the replay with SIGINT/SIGTERM wired to its interrupt (the windows measured
 * so far are written), and the exit code.
 */
import { createInterrupt } from "../interrupt.ts";
import { log } from "../log.ts";
import { readTrace } from "../replay/read-trace.ts";
import { runReplay } from "../replay/run-replay.ts";
import { type ParsedFlags, write } from "./command.ts";
import { exitCodeFor } from "./exit-code.ts";
import { analyzeCommand } from "./replay-analyze.ts";
import { parseAnalyzeOptions, parseReplayOptions } from "./replay-options.ts";
import { openReplaySink } from "../output/replay-sink.ts";

export async function replayCommand(raw: ParsedFlags): Promise<number> {
  if (raw.analyze === true) return analyzeCommand(parseAnalyzeOptions(raw), write);
  const opts = parseReplayOptions(raw);
  const trace = readTrace(opts.tracePath, opts.trace);
  const sink = openReplaySink(opts, write);
  const interrupt = createInterrupt({ warn: (m) => log.warn(m), exit: (code) => process.exit(code) });
  process.on("SIGINT", interrupt.onSignal);
  process.on("SIGTERM", interrupt.onSignal);
  const outcome = await runReplay(opts, trace, { sink, signal: interrupt.signal });
  return exitCodeFor(
    {
      interrupted: outcome.interrupted,
      cacheFailures: outcome.cacheFailures,
      saturated: outcome.saturated,
      failedRequests: outcome.failedRequests,
      gateFailures: [],
    },
    false,
    "replay",
  );
}
