/**
 * `warmbench replay TRACE`: described with --analyze (no server; replay-analyze.ts), or against a server: flags and the whole trace checked first (exit 2 naming the line before
 * anything is sent), outputs opened, then the replay with SIGINT/SIGTERM wired to its interrupt (the windows measured
 * so far are written), and the exit code.
 */
import { withServedMetrics } from "./served-metrics.ts";
import { createInterrupt } from "../interrupt.ts";
import { log } from "../log.ts";
import { readTrace } from "../replay/read-trace.ts";
import { runReplay } from "../replay/run-replay.ts";
import { runAgenticReplay } from "../replay/run-agentic.ts";
import { readAgenticTraces } from "../workload/agentic/read-agentic.ts";
import { type ParsedFlags, write } from "./command.ts";
import { exitCodeFor } from "./exit-code.ts";
import { gateFailures } from "../gates/evaluate.ts";
import { analyzeCommand } from "./replay-analyze.ts";
import { checkAgenticFlags, checkMooncakeFlags, parseAnalyzeOptions, parseReplayOptions } from "./replay-options.ts";
import { openReplaySink } from "../output/replay-sink.ts";

export async function replayCommand(raw: ParsedFlags): Promise<number> {
  if (raw.analyze === true) return analyzeCommand(parseAnalyzeOptions(raw), write);
  const opts = parseReplayOptions(raw);
  // The format named or detected; agentic sessions (WEKA, TraceLab) have their own reader and schedule.
  const read = readAgenticTraces(opts.tracePath, { format: opts.traceFormat, blockSize: opts.trace.blockSize });
  if (read.format === "mooncake") checkMooncakeFlags(raw);
  else checkAgenticFlags(raw);
  const trace = read.format === "mooncake" ? readTrace(opts.tracePath, opts.trace) : null;
  const sink = openReplaySink(opts, write);
  const interrupt = createInterrupt({ warn: (m) => log.warn(m), exit: (code) => process.exit(code) });
  process.on("SIGINT", interrupt.onSignal);
  process.on("SIGTERM", interrupt.onSignal);
  const io = { sink, signal: interrupt.signal };
  const outcome = await withServedMetrics(opts.serveMetrics, () =>
    read.format === "mooncake" ? runReplay(opts, trace!, io) : runAgenticReplay(opts, read.traces, read.format, io),
  );
  return exitCodeFor(
    {
      interrupted: outcome.interrupted,
      cacheFailures: outcome.cacheFailures,
      saturated: outcome.saturated,
      failedRequests: outcome.failedRequests,
      gateFailures: gateFailures(outcome.records),
    },
    false,
    "replay",
  );
}
