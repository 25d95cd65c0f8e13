/**
 * Orchestration of one sweep, as the script does it per pct: flush -> settle -> build prompts -> warm the
 * prefix -> run every prompt under the concurrency limit -> summarize -> print -> append JSONL.
 * Nothing here parses flags or exits the process: cli.ts does that.
 */
import pkg from "../package.json" with { type: "json" };
import { BenchError } from "./errors.ts";
import { log } from "./log.ts";
import type { RunOptions } from "./options.ts";
import { loadTokenizer, type LoadedTokenizer } from "./workload/tokenizer.ts";
import { PyRandom } from "./workload/rng.ts";
import { buildPrompts, formatPromptDump, serializeIds, type PromptSet } from "./workload/prompts.ts";
import {
  buildBody,
  checkGenerateRoute,
  createBodyTemplate,
  fetchServerInfo,
  flushCache,
  type ServerInfo,
} from "./backends/sglang.ts";
import { streamRequest, type StreamRequest } from "./client/stream.ts";
import { runPool } from "./client/pool.ts";
import type { RequestRecord } from "./metrics/record.ts";
import { summarizePct, type PctResult } from "./metrics/summarize.ts";
import { renderConsole, renderPctHeader } from "./report/console.ts";
import { appendJsonlLine, checkOutputWritable, formatJsonl } from "./report/jsonl.ts";
import { nowMs } from "./client/clock.ts";
import { appendFileSync, writeFileSync } from "node:fs";

export const VERSION: string = pkg.version;

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
}

/** Runs the whole sweep. Throws UsageError/BenchError for problems that stop it; per-request failures are data. */
export async function runSweep(opts: RunOptions, io: SweepIo): Promise<SweepOutcome> {
  if (opts.outputFile) checkOutputWritable(opts.outputFile, "--output-file");
  if (opts.dumpPrompts) checkOutputWritable(opts.dumpPrompts, "--dump-prompts");
  if (opts.dumpPrompts) writeFileSync(opts.dumpPrompts, "");

  log.info(`Loading tokenizer from ${opts.tokenizer} ...`);
  const tokenizer = await loadTokenizer(opts.tokenizer, { revision: opts.revision });
  log.info(`Tokenizer loaded (vocab_size=${tokenizer.population.length}) from ${tokenizer.path}`);

  const server = await fetchServerInfo(opts.baseUrl);
  await checkGenerateRoute(opts.baseUrl);
  const pageSize = opts.pageSize ?? server.pageSize ?? 1;
  const textMode: StreamRequest["textMode"] = server.incremental === true ? "incremental" : "cumulative";
  if (server.source === null) log.warn("the server has no /server_info: assuming cumulative text and page size 1");
  if (opts.extraRequestBody.input_ids !== undefined || opts.extraRequestBody.stream !== undefined) {
    log.warn("--extra-request-body overrides input_ids or stream: the measured prompts are not what warmbench built");
  }

  const rng = new PyRandom(opts.seed);
  const outcome: SweepOutcome = { results: [], failedRequests: 0, interrupted: false };
  for (const pct of opts.pcts) {
    if (io.signal?.aborted) break;
    const result = await runPct(pct, { opts, io, tokenizer, server, pageSize, textMode, rng });
    outcome.results.push(result);
    outcome.failedRequests += result.failed as number;
    if (result.interrupted) {
      outcome.interrupted = true;
      break;
    }
    if (result.completed === 0) throw new BenchError(`All requests failed for shared_prefix=${pct}%.`);
  }
  if (opts.outputFile) log.info(`JSONL results saved to ${opts.outputFile}`);
  return outcome;
}

interface PctDeps {
  opts: RunOptions;
  io: SweepIo;
  tokenizer: LoadedTokenizer;
  server: ServerInfo;
  pageSize: number;
  textMode: StreamRequest["textMode"];
  rng: PyRandom;
}

async function runPct(pct: number, d: PctDeps): Promise<PctResult> {
  const { opts, io } = d;
  const prefixLen = Math.floor((opts.totalTokens * pct) / 100);
  const suffixLen = opts.totalTokens - prefixLen;
  io.out(renderPctHeader({ shared_prefix_pct: pct, prefix_len: prefixLen, suffix_len: suffixLen }));

  log.info("Flushing KV cache ...");
  const flush = await flushCache(opts.baseUrl, { deadlineS: opts.flushDeadlineS, serverTimeoutS: opts.flushServerTimeoutS });
  if (opts.settleMs > 0) await Bun.sleep(opts.settleMs);

  log.info(`Building ${opts.numPrompts} prompts ...`);
  const set = buildPrompts({
    population: d.tokenizer.population,
    totalTokens: opts.totalTokens,
    pct,
    numPrompts: opts.numPrompts,
    rng: d.rng,
  });
  if (opts.dumpPrompts) appendFileSync(opts.dumpPrompts, formatPromptDump(set));
  const bodies = prepareBodies(set, opts);

  let warmCachedTokens: number | null = null;
  if (prefixLen > 0) {
    log.info(`Warming shared prefix only (${prefixLen} tokens) ...`);
    const warm = await streamRequest(requestFor(bodies.warm, -1, prefixLen, 1, d));
    if (!warm.ok) {
      throw new BenchError(
        `Warmup failed - Please make sure benchmark arguments are correctly specified. Error: ${warm.failureKind}: ${warm.failureMessage}`,
      );
    }
    warmCachedTokens = warm.cachedTokens;
  }

  log.info(`Sending requests (max_concurrency=${opts.maxConcurrency}) ...`);
  const startedAt = new Date().toISOString();
  const t0 = nowMs();
  const settled = await runPool(
    opts.numPrompts,
    opts.maxConcurrency,
    (i) => streamRequest(requestFor(bodies.build(i), i, opts.totalTokens, opts.outputLen, d)),
    { signal: io.signal },
  );
  const durationS = (nowMs() - t0) / 1000;
  const interrupted = io.signal?.aborted === true;
  // An interrupted pct is summarized from the requests that completed; the cancelled ones were never measured.
  const records = settled.filter((r): r is RequestRecord => r !== undefined && r.failureKind !== "cancelled");
  logFailures(records);

  const result = summarizePct({
    records,
    durationS,
    countTokens: d.tokenizer.countTokens,
    context: {
      backend: opts.backend,
      maxConcurrency: opts.maxConcurrency,
      pct,
      prefixLen,
      suffixLen,
      totalTokens: opts.totalTokens,
      numPrompts: opts.numPrompts,
      outputLen: opts.outputLen,
      expectedCachedTokens: expectedCached(prefixLen, opts.totalTokens, d.pageSize),
      pageSize: d.pageSize,
      interrupted,
      extra: {
        type: "pct",
        warmbench_version: VERSION,
        started_at: startedAt,
        model: opts.model,
        tokenizer: d.tokenizer.path,
        population_size: d.tokenizer.population.length,
        seed: opts.seed.toString(),
        base_url: opts.baseUrl,
        server_version: d.server.version,
        text_mode: d.textMode,
        sent: records.length,
        flush_attempts: flush.attempts,
        warm_cached_tokens: warmCachedTokens,
      },
    },
  });
  io.out(renderConsole(result));
  if (opts.outputFile) appendJsonlLine(opts.outputFile, formatJsonl(result));
  return result;
}

/** Cached tokens a measured request should report: the prefix in whole pages, at most promptLen-1 (SGLang). */
export function expectedCached(prefixLen: number, promptLen: number, pageSize: number): number {
  const cachable = Math.min(prefixLen, promptLen - 1);
  return Math.max(0, Math.floor(cachable / pageSize) * pageSize);
}

/** Serializes the prefix once and each suffix once; a body is then one memcpy, done before its clock starts. */
function prepareBodies(set: PromptSet, opts: RunOptions) {
  const ignoreEos = !opts.disableIgnoreEos;
  const measured = createBodyTemplate({ maxNewTokens: opts.outputLen, ignoreEos, extra: opts.extraRequestBody });
  const warmTpl = createBodyTemplate({ maxNewTokens: 1, ignoreEos, extra: opts.extraRequestBody });
  const prefixDigits = serializeIds(set.prefix);
  const suffixDigits: Uint8Array[] = [];
  for (let i = 0; i < set.numPrompts; i++) {
    suffixDigits.push(serializeIds(set.suffixes.subarray(i * set.suffixLen, (i + 1) * set.suffixLen)));
  }
  const empty = new Uint8Array(0);
  return {
    warm: buildBody(warmTpl, prefixDigits, empty),
    build: (i: number) => buildBody(measured, prefixDigits, suffixDigits[i] ?? empty),
  };
}

function requestFor(body: Uint8Array, index: number, promptLen: number, maxNewTokens: number, d: PctDeps): StreamRequest {
  return {
    url: `${d.opts.baseUrl}/generate`,
    body,
    index,
    promptLen,
    maxNewTokens,
    textMode: d.textMode,
    requestTimeoutMs: d.opts.requestTimeoutS * 1000,
    stallTimeoutMs: d.opts.stallTimeoutS * 1000,
    signal: d.io.signal,
  };
}

function logFailures(records: RequestRecord[]): void {
  const failed = records.filter((r) => !r.ok);
  if (failed.length === 0) return;
  log.warn(`${failed.length}/${records.length} requests failed`);
  for (const r of failed.slice(0, 5)) log.warn(`  ${r.failureKind}: ${r.failureMessage.slice(0, 160)}`);
}
