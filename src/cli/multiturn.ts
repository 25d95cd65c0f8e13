/** `warmbench multiturn`: validate, place this process, relaunch for a large concurrency, run with the interrupt wired, exit code. */
import { withServedMetrics } from "./served-metrics.ts";
import { cpus } from "node:os";
import { multiturnInFlight } from "../config/options.ts";
import { UsageError } from "../errors.ts";
import { gateFailures } from "../gates/evaluate.ts";
import { createInterrupt } from "../interrupt.ts";
import { log } from "../log.ts";
import { resolvePlacement, WORKERS_PER_CORE } from "../shard/placement.ts";
import { memoryBudgetBytes } from "../config/bounds.ts";
import { MEMORY_MODEL, workersInMemory } from "../config/memory-model.ts";
import { relaunchWithFetchCap } from "./relaunch.ts";
import { type ParsedFlags, write } from "./command.ts";
import { exitCodeFor } from "./exit-code.ts";

export async function multiturnCommand(raw: ParsedFlags): Promise<number> {
  const { parseMultiturnOptions } = await import("./multiturn-options.ts");
  const { runMultiturn } = await import("../multiturn/run-multiturn.ts");
  const opts = parseMultiturnOptions(raw);
  const placement = resolvePlacement(
    { workers: opts.workers, shard: opts.shard, coordinator: opts.coordinator, inFlight: multiturnInFlight(opts) },
    process.env,
    cpus().length,
    workersInMemory(memoryBudgetBytes()),
  );
  if (placement.kind === "local" && placement.cappedFrom !== undefined)
    log.warn(
      `--workers ${placement.cappedFrom}: capped at ${placement.size} processes (at most ${WORKERS_PER_CORE} a core on ${cpus().length} cores, and what half the memory holds at ${MEMORY_MODEL.perWorkerBytes / 2 ** 20} MiB each)`,
    );
  const size = placement.kind === "single" ? 1 : placement.size;
  if (size > opts.numClients) {
    throw new UsageError(
      `--${opts.shard !== null ? "shard" : "workers"}: ${size} processes for --num-clients ${opts.numClients}: each process drives at least one conversation`,
    );
  }
  const interrupt = createInterrupt({ warn: (m) => log.warn(m), exit: (code) => process.exit(code) });
  if (placement.kind === "worker" || (placement.kind === "shard" && placement.rank > 0)) {
    const { runMultiturnShard } = await import("../multiturn/shard-worker.ts");
    // A local worker shares the terminal's process group: its coordinator relays a Ctrl-C as a stop message.
    process.on("SIGINT", placement.kind === "worker" ? () => {} : interrupt.onSignal);
    process.on("SIGTERM", interrupt.onSignal);
    if (placement.kind === "worker") log.level = 1;
    return runMultiturnShard(opts, placement, interrupt.signal);
  }
  if (raw.quiet === true && raw.verbose !== true) log.level = 1;
  const relaunched = await relaunchWithFetchCap(multiturnInFlight(opts));
  if (relaunched !== null) return relaunched;
  process.on("SIGINT", interrupt.onSignal);
  process.on("SIGTERM", interrupt.onSignal);
  const { openMultiturnSink } = await import("../output/multiturn-sink.ts");
  const outcome = await withServedMetrics(opts.serveMetrics, () =>
    runMultiturn(opts, { sink: openMultiturnSink(opts, write), signal: interrupt.signal }, placement),
  );
  return exitCodeFor(
    {
      interrupted: outcome.interrupted,
      cacheFailures: outcome.cacheFailures,
      saturated: outcome.saturatedRounds,
      failedRequests: outcome.failedRequests,
      gateFailures: gateFailures(outcome.rounds),
    },
    opts.strict,
    "round",
  );
}
