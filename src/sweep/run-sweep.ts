/**
 * One sweep: check the outputs can be written, load the tokenizer, preflight the server (the backend's own), then
 * each pct (run-pct.ts) as the script does, and after the last one the TTFT model of the whole sweep.
 * Nothing here parses flags or exits the process, and nothing branches on the backend's name.
 */
import { writeFileSync } from "node:fs";
import { BenchError } from "../errors.ts";
import { log } from "../log.ts";
import type { RunOptions } from "../options.ts";
import { backendFor } from "../backends/index.ts";
import type { Control, ServerProfile } from "../backends/types.ts";
import { loadTokenizer } from "../workload/tokenizer.ts";
import { PromptFeed } from "../workload/prompt-feed.ts";
import type { PctRecord, RunInfo } from "../metrics/pct-record.ts";
import { renderSweepEnd } from "../report/console.ts";
import { checkOutputWritable } from "../report/jsonl.ts";
import { redactSecrets } from "../report/redact.ts";
import { VERSION } from "../version.ts";
import type { SweepContext, SweepIo } from "./context.ts";
import { runPct } from "./run-pct.ts";

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

/** Runs the whole sweep. Throws UsageError/BenchError for problems that stop it; per-request failures are data. */
export async function runSweep(opts: RunOptions, io: SweepIo): Promise<SweepOutcome> {
  for (const [path, flag] of [[opts.outputFile, "--output-file"], [opts.dumpPrompts, "--dump-prompts"], [opts.requestDetails, "--request-details"]] as const) {
    if (path) checkOutputWritable(path, flag);
  }
  for (const path of [opts.dumpPrompts, opts.requestDetails]) if (path) writeFileSync(path, "");

  const backend = backendFor(opts.backend);
  const ctl: Control = { baseUrl: opts.baseUrl, headers: opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}, signal: io.signal };
  // Bad input (a missing tokenizer file) is a usage error and is reported before anything is sent.
  log.info(`Loading tokenizer from ${opts.tokenizer} ...`);
  const tokenizer = await loadTokenizer(opts.tokenizer, { revision: opts.revision, signal: io.signal });
  log.info(`Tokenizer loaded (vocab_size=${tokenizer.population.length}) from ${tokenizer.path}`);

  // The prompt worker starts while the server is asked who it is.
  const prompts = new PromptFeed(tokenizer.population, opts.seed);
  try {
    return await sweepServer(opts, io, { backend, ctl, tokenizer, prompts });
  } finally {
    await prompts.close();
  }
}

async function sweepServer(opts: RunOptions, io: SweepIo, parts: Pick<SweepContext, "backend" | "ctl" | "tokenizer" | "prompts">): Promise<SweepOutcome> {
  const { backend, ctl } = parts;
  const server = await backend.preflight(ctl, { pageSize: opts.pageSize, servedModelName: opts.servedModelName });
  for (const warning of server.warnings) log.warn(warning);
  const overridden = ["input_ids", "prompt", "stream"].filter((k) => k in opts.extraRequestBody);
  if (overridden.length > 0) {
    log.warn(`--extra-request-body overrides ${overridden.join(", ")}: the measured prompts are not what warmbench built`);
  }
  if (opts.flush === "none") {
    log.warn("--flush none: the cache is NOT flushed between pcts; earlier pcts' prefixes may still be cached");
    if (opts.requestRates.length > 1) log.warn("--flush none with several rates: each rate resends prompts the server may still hold in full");
  }
  return sweepPcts(opts, io, { ...parts, server });
}

/** The pcts of the sweep, each line on disk before the next starts. */
async function sweepPcts(
  opts: RunOptions,
  io: SweepIo,
  parts: Pick<SweepContext, "backend" | "ctl" | "server" | "tokenizer" | "prompts">,
): Promise<SweepOutcome> {
  const { server } = parts;
  const ctx: SweepContext = {
    opts,
    io,
    ...parts,
    runId: newRunId(),
    run: runInfo(opts, server),
    state: { linesWritten: 0, ttftFit: null, probeIds: null },
  };
  const outcome: SweepOutcome = { records: [], failedRequests: 0, interrupted: false, cacheFailures: 0, saturatedPcts: 0 };
  for (const pct of opts.pcts) {
    if (io.signal?.aborted) {
      outcome.interrupted = true;
      break;
    }
    const { records, complete } = await runPct(pct, ctx);
    if (!complete) outcome.interrupted = true;
    for (const record of records) {
      outcome.records.push(record);
      outcome.failedRequests += record.failed;
      if (opts.verifyCache === "strict" && (record.cache_check === "mismatch" || record.cache_check === "unreported")) outcome.cacheFailures++;
      if (record.client_saturated) outcome.saturatedPcts++;
      if (!record.interrupted && record.completed === 0) throw new BenchError(`All requests failed for shared_prefix=${pct}%.`);
    }
    if (outcome.interrupted) break;
  }
  io.out(renderSweepEnd(outcome.records.at(-1)?.ttft_model ?? null));
  if (opts.outputFile) log.info(`JSONL results saved to ${opts.outputFile}`);
  return outcome;
}

/** 8 random base-36 characters: enough to tell the runs of one file apart. */
function newRunId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (b) => (b % 36).toString(36)).join("");
}

/** "maxConcurrency" -> "max_concurrency". */
const snake = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** An option as JSON can hold it: bigints and infinite rates as text ("inf", as the flag is written). */
function optionValue(value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number" && !Number.isFinite(value)) return String(value).replace("Infinity", "inf");
  if (Array.isArray(value)) return value.map(optionValue);
  return value;
}

/** The run's description, written once in its first pct line: shell loops over server flags describe themselves. */
function runInfo(opts: RunOptions, server: ServerProfile): RunInfo {
  const options: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(opts)) {
    if (key === "apiKey") options.api_key = value ? "(set)" : null;
    else options[snake(key)] = optionValue(value);
  }
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
  };
}
