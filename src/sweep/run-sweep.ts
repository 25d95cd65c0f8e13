/**
 * One sweep: check the outputs can be written, load the tokenizer, preflight the server (the backend's own), then
 * each pct (run-pct.ts) as the script does, and after the last one the TTFT model of the whole sweep.
 * Nothing here parses flags or exits the process, and nothing branches on the backend's name.
 */
import { writeFileSync } from "node:fs";
import { BenchError } from "../errors.ts";
import { log } from "../log.ts";
import type { RunOptions } from "../options.ts";
import { resolveBackend } from "../backends/index.ts";
import type { Backend, Control, EngineInfo, ServerProfile } from "../backends/types.ts";
import { inFlightLimit } from "../options.ts";
import { loadTokenizer } from "../workload/tokenizer.ts";
import { PyRandom } from "../workload/rng.ts";
import type { PctRecord, RunInfo } from "../metrics/pct-record.ts";
import { renderSweepEnd } from "../report/console.ts";
import { checkOutputWritable } from "../report/jsonl.ts";
import { redactSecrets } from "../report/redact.ts";
import { VERSION } from "../version.ts";
import type { SweepContext, SweepIo } from "./context.ts";
import { runPct } from "./run-pct.ts";
import { startShardGroup } from "./shards.ts";
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
}

/**
 * Runs the whole sweep, alone or as the coordinator of the shards `placement` describes. Throws UsageError/BenchError
 * for problems that stop it; per-request failures are data.
 */
export async function runSweep(opts: RunOptions, io: SweepIo, placement: Placement = { kind: "single" }): Promise<SweepOutcome> {
  for (const [path, flag] of [[opts.outputFile, "--output-file"], [opts.dumpPrompts, "--dump-prompts"], [opts.requestDetails, "--request-details"]] as const) {
    if (path) checkOutputWritable(path, flag);
  }
  for (const path of [opts.dumpPrompts, opts.requestDetails]) if (path) writeFileSync(path, "");

  const ctl: Control = { baseUrl: opts.baseUrl, headers: opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}, signal: io.signal };
  // Bad input (a missing tokenizer file) is a usage error and is reported before anything is sent.
  log.info(`Loading tokenizer from ${opts.tokenizer} ...`);
  const tokenizer = await loadTokenizer(opts.tokenizer, { revision: opts.revision, signal: io.signal });
  log.info(`Tokenizer loaded (vocab_size=${tokenizer.population.length}) from ${tokenizer.path}`);

  const resolved = await resolveBackend(ctl, opts.backend, opts.endpoint);
  const backend = resolved.backend;
  if (resolved.engine.source === "detected") log.info(`Engine: ${backend.engine} (detected: ${resolved.engine.evidence}); requests go to ${backend.generatePath}`);
  ctl.freshConnections = backend.freshConnections;
  const checkFlush = opts.flush === "auto" && opts.verifyCache !== "off";
  const preflight = await backend.preflight(ctl, { pageSize: opts.pageSize, servedModelName: opts.servedModelName, checkFlush, known: resolved.known });
  const server: ServerProfile = { ...preflight, engine: engineOf(backend, preflight, resolved.engine) };
  for (const warning of server.warnings) log.warn(warning);
  for (const note of explainServerLimits(opts, server)) log.warn(note);
  const overridden = ["input_ids", "prompt", "stream"].filter((k) => k in opts.extraRequestBody);
  if (overridden.length > 0) {
    log.warn(`--extra-request-body overrides ${overridden.join(", ")}: the measured prompts are not what warmbench built`);
  }
  if (opts.flush === "none") log.warn("--flush none: the cache is NOT flushed between pcts; earlier pcts' prefixes may still be cached");

  const runId = newRunId();
  const shards = await startShardGroup(placement, shardSetup(runId, opts, server, backend), io.signal);
  const ctx: SweepContext = {
    opts,
    io,
    backend,
    ctl,
    server,
    tokenizer,
    rng: new PyRandom(opts.seed),
    runId,
    run: runInfo(opts, server, backend),
    state: { linesWritten: 0, ttftFit: null, probeIds: null, templateHeadTokens: 0 },
    share: shards ? { rank: 0, size: shards.size } : null,
    shards,
    showProgress: true,
  };
  try {
    return await runPcts(ctx);
  } finally {
    await shards?.close();
  }
}

async function runPcts(ctx: SweepContext): Promise<SweepOutcome> {
  const { opts, io } = ctx;
  const outcome: SweepOutcome = { records: [], failedRequests: 0, interrupted: false, cacheFailures: 0, saturatedPcts: 0 };
  for (const pct of opts.pcts) {
    if (io.signal?.aborted) {
      outcome.interrupted = true;
      break;
    }
    const record = await runPct(pct, ctx);
    outcome.records.push(record);
    outcome.failedRequests += record.failed;
    if (opts.verifyCache === "strict" && (record.cache_check === "mismatch" || record.cache_check === "unreported")) outcome.cacheFailures++;
    if (record.client_saturated) outcome.saturatedPcts++;
    const failedShards = record.shards?.failed ?? [];
    if (failedShards.length > 0) {
      throw new BenchError(`${failedShards.join("; ")}: the pct was written with what the other shards measured (interrupted: true)`);
    }
    if (record.interrupted) {
      outcome.interrupted = true;
      break;
    }
    if (record.completed === 0) throw new BenchError(`All requests failed for shared_prefix=${pct}%.`);
  }
  io.out(renderSweepEnd(outcome.records.at(-1)?.ttft_model ?? null));
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

/** The engine as the backend's preflight saw it, with how it was chosen (named or detected). */
function engineOf(backend: Backend, server: ServerProfile, how: Pick<EngineInfo, "source" | "evidence">): EngineInfo {
  const name = server.engine?.name ?? backend.engine;
  return { name, source: how.source, evidence: how.source === "detected" ? how.evidence : (server.engine?.evidence ?? how.evidence) };
}

/**
 * What the server's limits do to this run, one line each: requests beyond its slots wait in its queue (their TTFT
 * includes the wait), and a prompt plus its output that exceeds its context is refused or cut short.
 */
export function explainServerLimits(opts: RunOptions, server: ServerProfile): string[] {
  const notes: string[] = [];
  const inFlight = inFlightLimit(opts);
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

/** 8 random base-36 characters: enough to tell the runs of one file apart. */
function newRunId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (b) => (b % 36).toString(36)).join("");
}

/** "maxConcurrency" -> "max_concurrency". */
const snake = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The run's description, written once in its first pct line: shell loops over server flags describe themselves. */
function runInfo(opts: RunOptions, server: ServerProfile, backend: Backend): RunInfo {
  const options: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(opts)) {
    if (key === "apiKey") options.api_key = value ? "(set)" : null;
    else options[snake(key)] = typeof value === "bigint" ? value.toString() : value;
  }
  // What ran, as --backend names it (engine.source says whether it was detected): an SGLang user's file reads as
  // it did before --backend auto.
  options.backend = backend.name;
  options.endpoint = backend.endpoint;
  const engine = server.engine!;
  return {
    warmbench_version: VERSION,
    started_at: new Date().toISOString(),
    options,
    served_model: server.model,
    page_size: server.pageSize,
    page_size_source: server.pageSizeSource,
    server_info_source: server.info.source,
    server_version: server.info.version,
    server_info: server.info.raw ? redactSecrets(server.info.raw) : null,
    engine: {
      name: engine.name,
      source: engine.source,
      evidence: engine.evidence,
      endpoint: backend.generatePath,
      prompt_encoding: backend.promptEncoding,
      cache_slots: server.cacheSlots ?? null,
      max_running: server.maxRunning ?? null,
      flush_gap: server.flushGap ?? null,
    },
  };
}
