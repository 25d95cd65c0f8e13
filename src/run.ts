/**
 * Orchestration of one sweep: preflight the server, load the tokenizer, then per pct (run-pct.ts) as the
 * script does, and after the sweep the TTFT model. Nothing here parses flags or exits the process.
 */
import { writeFileSync } from "node:fs";
import { BenchError } from "./errors.ts";
import { log } from "./log.ts";
import type { RunOptions } from "./options.ts";
import { loadTokenizer } from "./workload/tokenizer.ts";
import { PyRandom } from "./workload/rng.ts";
import { backendFor } from "./backends/index.ts";
import { checkGenerateRoute, fetchServerInfo, type ServerInfo } from "./backends/sglang.ts";
import { discoverModel } from "./backends/openai.ts";
import type { PctResult } from "./metrics/summarize.ts";
import { fitTtftModel } from "./metrics/ttft-model.ts";
import { renderSweepSummary, type SweepSummary } from "./report/console.ts";
import { appendJsonlLine, checkOutputWritable, formatJsonl } from "./report/jsonl.ts";
import { runPct, type SweepContext } from "./run-pct.ts";
import { VERSION } from "./version.ts";

export { VERSION };

export interface SweepIo {
  /** Where the report goes (stdout in the CLI). */
  out: (text: string) => void;
  /** Aborting it stops the sweep: in-flight requests are cancelled and the current pct is written as interrupted. */
  signal?: AbortSignal;
}

export interface SweepOutcome {
  results: PctResult[];
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
  const headers: Record<string, string> = opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {};
  // Bad input (a missing tokenizer file) is a usage error and is reported before anything is sent.
  log.info(`Loading tokenizer from ${opts.tokenizer} ...`);
  const tokenizer = await loadTokenizer(opts.tokenizer, { revision: opts.revision });
  log.info(`Tokenizer loaded (vocab_size=${tokenizer.population.length}) from ${tokenizer.path}`);

  const server = await fetchServerInfo(opts.baseUrl, headers);
  let model: string | null = null;
  if (backend.name === "sglang") await checkGenerateRoute(opts.baseUrl, headers);
  else model = opts.servedModelName ?? (await discoverModel(opts.baseUrl, headers));

  const pageSize = opts.pageSize ?? server.pageSize ?? (backend.name === "openai" ? 16 : 1);
  if (server.source === null && backend.name === "sglang") {
    log.warn("the server has no /server_info: assuming cumulative text and page size 1 (see --page-size)");
  }
  if (opts.pageSize === null && server.pageSize === null && backend.name === "openai") {
    log.warn("page size unknown: assuming vLLM's block size 16 for the expected cached tokens (see --page-size)");
  }
  const overridden = ["input_ids", "prompt", "stream"].filter((k) => k in opts.extraRequestBody);
  if (overridden.length > 0) {
    log.warn(`--extra-request-body overrides ${overridden.join(", ")}: the measured prompts are not what warmbench built`);
  }
  if (opts.flush === "none") log.warn("--flush none: the cache is NOT flushed between pcts; earlier pcts' prefixes may still be cached");
  if (opts.outputFile) appendJsonlLine(opts.outputFile, formatJsonl(runHeader(opts, server, model, pageSize)));

  const ctx: SweepContext = {
    opts,
    io,
    backend,
    headers,
    model,
    tokenizer,
    server,
    pageSize,
    textMode: backend.deltaText || server.incremental === true ? "incremental" : "cumulative",
    rng: new PyRandom(opts.seed),
    runId: Math.random().toString(36).slice(2, 10),
    fit: { uncached: [], ttftMs: [] },
  };
  const outcome: SweepOutcome = { results: [], failedRequests: 0, interrupted: false, cacheFailures: 0, saturatedPcts: 0 };
  for (const pct of opts.pcts) {
    if (io.signal?.aborted) break;
    const { result, cacheFailed, saturated } = await runPct(pct, ctx);
    outcome.results.push(result);
    outcome.failedRequests += result.failed;
    if (cacheFailed) outcome.cacheFailures++;
    if (saturated) outcome.saturatedPcts++;
    if (result.interrupted) {
      outcome.interrupted = true;
      break;
    }
    if (result.completed === 0) throw new BenchError(`All requests failed for shared_prefix=${pct}%.`);
  }
  const summary: SweepSummary = {
    type: "summary",
    ttft_model: fitTtftModel(ctx.fit.uncached, ctx.fit.ttftMs),
    pcts_completed: outcome.results.length,
    failed_requests: outcome.failedRequests,
    cache_check_failures: outcome.cacheFailures,
    saturated_pcts: outcome.saturatedPcts,
    interrupted: outcome.interrupted,
  };
  io.out(renderSweepSummary(summary));
  if (opts.outputFile) {
    appendJsonlLine(opts.outputFile, formatJsonl(summary));
    log.info(`JSONL results saved to ${opts.outputFile}`);
  }
  return outcome;
}

/** The run's first JSONL line: what was run against what, so shell loops over server flags describe themselves. */
function runHeader(opts: RunOptions, server: ServerInfo, model: string | null, pageSize: number): Record<string, unknown> {
  const { apiKey: _secret, seed, extraRequestBody, ...rest } = opts;
  return {
    type: "run",
    warmbench_version: VERSION,
    started_at: new Date().toISOString(),
    options: { ...rest, seed: seed.toString(), extraRequestBody, apiKey: opts.apiKey ? "(set)" : null },
    served_model: model,
    page_size: pageSize,
    server_info_source: server.source,
    server_version: server.version,
    server_info: server.raw ? redactSecrets(server.raw) : null,
  };
}

/** api_key, admin_api_key, hf_token, ssl_keyfile_password...; not tokenizer_path or max_total_num_tokens. */
const SECRET_KEY = /(^|_)(key|token|secret|password|passwd|credential|credentials)(_|$)/i;

/** SGLang's /server_info lists every server argument, api_key and admin_api_key included: never write those. */
export function redactSecrets(obj: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (SECRET_KEY.test(k) && v !== null && v !== false && typeof v !== "number") out[k] = "(redacted)";
    else if (v !== null && typeof v === "object" && !Array.isArray(v)) out[k] = redactSecrets(v as Record<string, unknown>);
    else out[k] = v;
  }
  return out;
}
