/**
 * `warmbench replay TRACE`: described with --analyze (no server; replay-analyze.ts), or against a server: flags, the
 * whole trace and its memory (the memory model) checked first (exit 2 naming the line or what to lower, before
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
import { checkMemory } from "../config/bounds.ts";
import { replayMemoryBytes } from "../config/memory-model.ts";
import { agenticReplayShape, mooncakeReplayShape } from "../replay/memory-shape.ts";

export async function replayCommand(raw: ParsedFlags): Promise<number> {
  if (raw.analyze === true) return analyzeCommand(parseAnalyzeOptions(raw), write);
  const opts = parseReplayOptions(raw);
  // The format named or detected; agentic sessions (WEKA, TraceLab) have their own reader and schedule.
  const read = readAgenticTraces(opts.tracePath, { format: opts.traceFormat, blockSize: opts.trace.blockSize });
  if (read.format === "mooncake") checkMooncakeFlags(raw);
  else checkAgenticFlags(raw);
  const trace = read.format === "mooncake" ? readTrace(opts.tracePath, opts.trace) : null;
  // The memory model (config/memory-model.ts), before anything is sent: the requests, their chains, the block store
  // and the working set, from the parsed trace (its slice) or the corpus in its lanes.
  if (trace !== null) {
    const shape = mooncakeReplayShape(trace);
    checkMemory(
      replayMemoryBytes(shape),
      `${opts.tracePath}: ${trace.requests.length} requests (${shape.chainIds} hash ids, a working set of ${shape.workingSetTokens} tokens; --num-prompts, --start and --duration replay a slice)`,
    );
  } else if (read.format !== "mooncake") {
    const shape = agenticReplayShape(read.traces, opts.sessions);
    const traces = read.traces.length;
    const sizes = `${shape.requests} requests, ${shape.chainIds} hash ids, a working set of ${shape.workingSetTokens} tokens`;
    checkMemory(
      replayMemoryBytes(shape),
      opts.sessions !== null && opts.sessions > traces
        ? `--sessions ${opts.sessions}: ${opts.sessions} session trees of ${opts.tracePath}'s ${traces} trace(s) (${sizes})`
        : `${opts.tracePath}: ${traces} session trees, one per trace (${sizes}; replay a smaller corpus)`,
    );
  }
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
