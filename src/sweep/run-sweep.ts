/**
 * One sweep: check the outputs can be written, load the tokenizer, preflight the server (the backend's own), then
 * each pct (run-pct.ts) as the script does, and after the last one the TTFT model of the whole sweep.
 * Nothing here parses flags or exits the process, and nothing branches on the backend's name.
 */
import { BenchError } from "../errors.ts";
import { log } from "../log.ts";
import type { RunOptions } from "../config/options.ts";
import type { Backend, ServerProfile } from "../backends/types.ts";
import { PyRandom } from "../workload/rng.ts";
import { PromptFeed } from "../workload/prompt-feed.ts";
import type { PctRecord } from "../metrics/pct-record.ts";
import { gateFailures, type GateFailure } from "../gates/evaluate.ts";
import { prepareRun } from "../engine/prepare.ts";
import { newRunId, runInfo } from "../engine/run-info.ts";
import { FIRST_LINE, type SweepContext, type SweepIo } from "./context.ts";
import { runPct } from "./run-pct.ts";
import { sweepCells } from "./cells.ts";
import { runInFlightLimit } from "./plan.ts";
import { startShardGroup } from "../engine/gather.ts";
import { workloadHash } from "./shard-worker.ts";
import type { Placement } from "../shard/placement.ts";
import type { ShardSetup } from "../shard/messages.ts";

export type { SweepIo } from "./context.ts";

export interface SweepOutcome {
  records: PctRecord[];
  /** Measured requests that failed, over all pcts. */
  failedRequests: number;
  interrupted: boolean;
  /** Pcts whose cache check failed under --verify-cache strict. */
  cacheFailures: number;
  /** Pcts during which the client itself was saturated. */
  saturatedPcts: number;
  /** Every gate verdict that failed, with its pct. */
  gateFailures: GateFailure[];
}

/**
 * Runs the whole sweep, alone or as the coordinator of the shards `placement` describes. Throws UsageError/BenchError
 * for problems that stop it; per-request failures are data.
 */
export async function runSweep(opts: RunOptions, io: SweepIo, placement: Placement = { kind: "single" }): Promise<SweepOutcome> {
  const { ctl, tokenizer, backend, server } = await prepareRun(opts, io.signal);
  for (const note of explainServerLimits(opts, server)) log.warn(note);
  const overridden = ["input_ids", "prompt", "stream"].filter((k) => k in opts.extraRequestBody);
  if (overridden.length > 0) {
    log.warn(`--extra-request-body overrides ${overridden.join(", ")}: the measured prompts are not what warmbench built`);
  }
  if (opts.flush === "none") {
    log.warn("--flush none: the cache is NOT flushed between pcts; earlier pcts' prefixes may still be cached");
    if (opts.requestRates.length > 1) log.warn("--flush none with several rates: each rate resends prompts the server may still hold in full");
  }

  const runId = newRunId();
  // Token-id prompts are drawn just in time by the prompt worker; it starts while the shards join.
  const prompts = backend.promptEncoding === "token_ids" ? new PromptFeed(tokenizer.population, opts.seed) : null;
  let shards: Awaited<ReturnType<typeof startShardGroup>> = null;
  try {
    shards = await startShardGroup(placement, shardSetup(runId, opts, server, backend), io.signal);
  } catch (err) {
    await prompts?.close();
    throw err;
  }
  const ctx: SweepContext = {
    opts,
    io,
    backend,
    ctl,
    server,
    tokenizer,
    prompts,
    rng: new PyRandom(opts.seed),
    runId,
    run: runInfo(opts, server, backend),
    share: shards ? { rank: 0, size: shards.size } : null,
    shards,
  };
  try {
    return await runPcts(ctx);
  } finally {
    await shards?.close();
    await prompts?.close();
  }
}

async function runPcts(ctx: SweepContext): Promise<SweepOutcome> {
  const { opts, io } = ctx;
  const outcome: SweepOutcome = { records: [], failedRequests: 0, interrupted: false, cacheFailures: 0, saturatedPcts: 0, gateFailures: [] };
  if (opts.workingSets.some((k) => k > 1)) logCapacity(ctx.server, opts);
  const unused = opts.workingSets.filter((k) => k > opts.numPrompts);
  if (unused.length > 0) {
    log.warn(`--working-set ${unused.join(",")} > --num-prompts ${opts.numPrompts}: only ${opts.numPrompts} of the prefixes are used by measured prompts (all are warmed)`);
  }
  let state = FIRST_LINE;
  for (const cell of sweepCells(opts)) {
    if (io.signal?.aborted) {
      outcome.interrupted = true;
      break;
    }
    const { records, complete, state: next } = await runPct(cell, ctx, state);
    state = next;
    if (!complete) outcome.interrupted = true;
    for (const record of records) {
      outcome.records.push(record);
      outcome.failedRequests += record.failed;
      if (opts.verifyCache === "strict" && (record.cache_check === "mismatch" || record.cache_check === "unreported")) outcome.cacheFailures++;
      if (record.client_saturated) outcome.saturatedPcts++;
      const failedShards = record.shards?.failed ?? [];
      if (failedShards.length > 0) {
        throw new BenchError(`${failedShards.join("; ")}: the pct was written with what the other shards measured (interrupted: true)`);
      }
      if (!record.interrupted && record.completed === 0) throw new BenchError(`All requests failed for shared_prefix=${cell.pct}%.`);
    }
    if (outcome.interrupted) break;
  }
  const ttftModel = outcome.records.at(-1)?.ttft_model ?? null;
  io.sink.ended(outcome.records, ttftModel);
  outcome.gateFailures = gateFailures(outcome.records);
  if (opts.outputFile) log.info(`JSONL results saved to ${opts.outputFile}`);
  return outcome;
}

/** What every shard needs from the preflight, and the proof that it runs the same workload. */
function shardSetup(runId: string, opts: RunOptions, server: ServerProfile, backend: Backend): ShardSetup {
  return {
    run_id: runId, options_hash: workloadHash(opts), model: server.model, page_size: server.pageSize, text_mode: server.textMode,
    server_version: server.info.version, backend: backend.name, endpoint: backend.endpoint,
  };
}

/**
 * What the server's limits do to this run, one line each: requests beyond its slots wait in its queue (their TTFT
 * includes the wait), and a prompt plus its output that exceeds its context is refused or cut short.
 */
export function explainServerLimits(opts: RunOptions, server: ServerProfile): string[] {
  const notes: string[] = [];
  const inFlight = runInFlightLimit(opts);
  const slots = server.maxRunning ?? null;
  if (slots !== null && inFlight > slots) {
    notes.push(
      `--max-concurrency ${opts.maxConcurrency === 0 ? `0 (${inFlight} at once)` : inFlight} is above the server's ${slots} slot(s): ` +
        `${slots} requests run at once and the others wait in its queue, so their TTFT includes that wait ` +
        `(start the server with more slots, e.g. llama-server -np ${inFlight}, to run them all at once)`,
    );
  }
  const context = server.info.contextLength;
  if (context !== null && opts.totalTokens + opts.outputLen > context) {
    notes.push(
      `--total-tokens ${opts.totalTokens} + --output-len ${opts.outputLen} exceed the server's context of ${context} tokens` +
        `${server.cacheSlots ? " per slot" : ""}: requests will be refused or cut short`,
    );
  }
  return notes;
}

/** A working-set sweep is read against the server's cache capacity: say what it is, or that it is unknown. */
function logCapacity(server: ServerProfile, opts: RunOptions): void {
  const device = server.info.cacheCapacityTokens;
  const host = server.info.hostCacheCapacityTokens;
  if (device === null) {
    log.warn("the server does not report its cache capacity (/server_info max_total_num_tokens): working sets are not compared with it");
    return;
  }
  const largest = Math.max(...opts.workingSets) * Math.floor((opts.totalTokens * Math.max(...opts.pcts)) / 100);
  log.info(`Cache capacity: ${device} tokens on the device${host === null ? "" : `, ${host} in the host tier`}; largest working set ${largest} tokens`);
}
