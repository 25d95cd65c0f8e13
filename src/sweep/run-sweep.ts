/**
 * One sweep: check the outputs can be written, load the tokenizer, preflight the server (the backend's own), then
 * each pct (run-pct.ts) as the script does, and after the last one the TTFT model of the whole sweep.
 * Nothing here parses flags or exits the process, and nothing branches on the backend's name.
 */
import { UsageError } from "../errors.ts";
import { BenchError } from "../errors.ts";
import { log } from "../log.ts";
import { outputStops } from "./output-stops.ts";
import type { RunOptions } from "../config/options.ts";
import type { ServerProfile } from "../backends/types.ts";
import type { SweepLine } from "../metrics/sweep-line.ts";
import { gateFailures, type GateFailure } from "../gates/evaluate.ts";
import { fatalLine } from "../engine/session.ts";
import type { SweepIo } from "./context.ts";
import { sweepCells } from "./cells.ts";
import { runInFlightLimit } from "./plan.ts";
import { openSweepSession, type SweepSession } from "./session.ts";
import type { Placement } from "../shard/placement.ts";

export interface SweepOutcome {
  records: SweepLine[];
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
  const session = await openSweepSession(opts, io, placement, (server) => logRunNotes(opts, server));
  try {
    return await runPcts(session);
  } finally {
    await session.close();
  }
}

function logRunNotes(opts: RunOptions, server: ServerProfile): void {
  for (const note of explainServerLimits(opts, server)) log.warn(note);
  const overridden = ["input_ids", "prompt", "stream"].filter((k) => k in opts.extraRequestBody);
  if (overridden.length > 0) {
    log.warn(`--extra-request-body overrides ${overridden.join(", ")}: the measured prompts are not what warmbench built`);
  }
  if (opts.flush === "none") {
    log.warn("--flush none: the cache is NOT flushed between pcts; earlier pcts' prefixes may still be cached");
    if (opts.requestRates.length > 1) log.warn("--flush none with several rates: each rate resends prompts the server may still hold in full");
  }
}

async function runPcts(session: SweepSession): Promise<SweepOutcome> {
  const { ctx } = session;
  const { opts, io } = ctx;
  const outcome: SweepOutcome = { records: [], failedRequests: 0, interrupted: false, cacheFailures: 0, saturatedPcts: 0, gateFailures: [] };
  if (opts.workingSets.some((k) => k > 1)) logCapacity(ctx.server, opts);
  const unused = opts.workingSets.filter((k) => k > opts.numPrompts);
  if (unused.length > 0) {
    log.warn(
      `--working-set ${unused.join(",")} > --num-prompts ${opts.numPrompts}: only ${opts.numPrompts} of the prefixes are used by measured prompts (all are warmed)`,
    );
  }
  for (const cell of sweepCells(opts)) {
    if (io.signal?.aborted) {
      outcome.interrupted = true;
      break;
    }
    if (outputStops(opts)) break;
    const { records, complete } = await session.cell(cell);
    if (!complete) outcome.interrupted = true;
    for (const record of records) {
      outcome.records.push(record);
      outcome.failedRequests += record.failed;
      if (opts.verifyCache === "strict" && (record.cache_check === "mismatch" || record.cache_check === "unreported")) outcome.cacheFailures++;
      if (record.client_saturated) outcome.saturatedPcts++;
      const fatal = fatalLine(record);
      if (fatal !== null) throw new BenchError(fatal);
    }
    if (outcome.interrupted) break;
  }
  // A signal during the last line's studies (its fidelity check) ends no line early, but the run was interrupted.
  if (io.signal?.aborted) outcome.interrupted = true;
  const ttftModel = outcome.records.at(-1)?.ttft_model ?? null;
  io.sink.ended(outcome.records, ttftModel);
  outcome.gateFailures = gateFailures(outcome.records);
  if (opts.outputFile) log.info(`JSONL results saved to ${opts.outputFile}`);
  return outcome;
}

/**
 * What the server's limits do to this run, one line each: requests beyond its slots wait in its queue (their TTFT
 * includes the wait). A prompt plus its output that exceeds the server's context is refused (exit 2) before any
 * flush or request: every request would be refused or cut short, and drawing such prompts can take minutes.
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
    throw new UsageError(
      `--total-tokens ${opts.totalTokens} + --output-len ${opts.outputLen} exceed the server's context of ${context} tokens` +
        `${server.cacheSlots ? " per slot" : ""} (${server.info.source}): every request would be refused or cut short`,
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
