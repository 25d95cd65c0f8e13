/** Runs the sweep (or this process's shard of it) with SIGINT/SIGTERM wired to its interrupt: `run` and `demo`. */
import { withServedMetrics } from "./served-metrics.ts";
import { cpus } from "node:os";
import { createInterrupt } from "../interrupt.ts";
import { log } from "../log.ts";
import type { RunOptions } from "../config/options.ts";
import { resolvePlacement, WORKERS_PER_CORE } from "../shard/placement.ts";
import { memoryBudgetBytes } from "../config/bounds.ts";
import { MEMORY_MODEL, workersInMemory } from "../config/memory-model.ts";
import { runInFlightLimit } from "../sweep/plan.ts";
import { runSweep } from "../sweep/run-sweep.ts";
import { openSweepSink } from "../output/sweep-sink.ts";
import { runShardWorker } from "../sweep/shard-worker.ts";
import { write } from "./command.ts";
import { exitCodeFor } from "./exit-code.ts";
import { addFinishedRun } from "./history-db.ts";

/** Returns the exit code. */
export async function sweep(opts: RunOptions, historyDb: string | null = null): Promise<number> {
  const placement = resolvePlacement(
    { workers: opts.workers, shard: opts.shard, coordinator: opts.coordinator, inFlight: runInFlightLimit(opts) },
    process.env,
    cpus().length,
    workersInMemory(memoryBudgetBytes()),
  );
  if (placement.kind === "local" && placement.cappedFrom !== undefined)
    log.warn(
      `--workers ${placement.cappedFrom}: capped at ${placement.size} processes (at most ${WORKERS_PER_CORE} a core on ${cpus().length} cores, and what half the memory holds at ${MEMORY_MODEL.perWorkerBytes / 2 ** 20} MiB each)`,
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
  const outcome = await withServedMetrics(opts.serveMetrics, () => runSweep(opts, { sink: openSweepSink(opts, write), signal: interrupt.signal }, placement));
  // run --history: the coordinator (or a lone process) stores the whole run once it ended.
  if (historyDb !== null) addFinishedRun(historyDb, outcome.records, outcome.interrupted, opts.outputFile ?? null);
  return exitCodeFor(
    {
      interrupted: outcome.interrupted,
      cacheFailures: outcome.cacheFailures,
      saturated: outcome.saturatedPcts,
      failedRequests: outcome.failedRequests,
      gateFailures: outcome.gateFailures,
    },
    opts.strict,
    "pct",
  );
}
