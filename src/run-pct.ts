/**
 * One shared-prefix percentage, as the script does it: flush -> settle -> build prompts -> warm the prefix ->
 * run every prompt under the concurrency limit -> summarize -> print -> append JSONL; plus our cache check,
 * server counters and client self-check.
 */
import { appendFileSync } from "node:fs";
import { BenchError, EXIT } from "./errors.ts";
import { log } from "./log.ts";
import type { RunOptions } from "./options.ts";
import type { LoadedTokenizer } from "./workload/tokenizer.ts";
import { PyRandom } from "./workload/rng.ts";
import { buildPrompts, formatPromptDump, serializeIds, type PromptSet } from "./workload/prompts.ts";
import type { Backend } from "./backends/types.ts";
import { bodyParts } from "./backends/body.ts";
import type { ServerInfo } from "./backends/sglang.ts";
import { resolveGeneratedText, streamRequest, type StreamRequest } from "./client/stream.ts";
import { runPool } from "./client/pool.ts";
import { nowMs } from "./client/clock.ts";
import { hitRateBetween, scrapeCacheCounters } from "./client/prometheus.ts";
import type { RequestRecord } from "./metrics/record.ts";
import { summarizePct, type PctResult } from "./metrics/summarize.ts";
import { checkCache } from "./metrics/cache-check.ts";
import { describeSaturation, isSaturated, startClientMonitor } from "./metrics/self-check.ts";
import { renderConsole, renderPctHeader } from "./report/console.ts";
import { appendJsonlLine, formatJsonl } from "./report/jsonl.ts";
import { appendRequestDetails, requestIdOf } from "./report/details.ts";
import { startProgress } from "./report/progress.ts";
import type { SweepIo } from "./run.ts";
import { VERSION } from "./version.ts";

/** What every pct of a sweep shares. */
export interface SweepContext {
  opts: RunOptions;
  io: SweepIo;
  backend: Backend;
  /** Sent with every request to the target server (Authorization when --api-key is set). */
  headers: Record<string, string>;
  /** OpenAI backend: the model name sent; null for SGLang native. */
  model: string | null;
  tokenizer: LoadedTokenizer;
  server: ServerInfo;
  pageSize: number;
  textMode: StreamRequest["textMode"];
  /** One RNG across all pcts, drawn in the script's order. */
  rng: PyRandom;
  runId: string;
  /** Samples of the sweep-wide TTFT model, appended per pct. */
  fit: { uncached: number[]; ttftMs: number[] };
}

export interface PctOutcome {
  result: PctResult;
  cacheFailed: boolean;
  saturated: boolean;
}

export async function runPct(pct: number, ctx: SweepContext): Promise<PctOutcome> {
  const { opts, io } = ctx;
  const prefixLen = Math.floor((opts.totalTokens * pct) / 100);
  const suffixLen = opts.totalTokens - prefixLen;
  io.out(renderPctHeader({ shared_prefix_pct: pct, prefix_len: prefixLen, suffix_len: suffixLen }));

  let flushAttempts = 0;
  let flushProbeCachedTokens: number | null = null;
  if (opts.flush !== "none") {
    log.info("Flushing KV cache ...");
    if (opts.verifyCache === "off") flushAttempts = await unlessInterrupted(flush(ctx), io.signal);
    else ({ attempts: flushAttempts, probeCachedTokens: flushProbeCachedTokens } = await unlessInterrupted(flushAndProve(pct, ctx), io.signal));
    if (opts.settleMs > 0) await Bun.sleep(opts.settleMs);
  }

  // The tokenizer is only needed to count output tokens after the run: build it here, outside any clock and
  // after the first requests of the sweep went out.
  ctx.tokenizer.prepare();
  log.info(`Building ${opts.numPrompts} prompts ...`);
  const set = buildPrompts({ population: ctx.tokenizer.population, totalTokens: opts.totalTokens, pct, numPrompts: opts.numPrompts, rng: ctx.rng });
  if (opts.dumpPrompts) appendFileSync(opts.dumpPrompts, formatPromptDump(set));
  const bodies = prepareBodies(set, ctx);

  let warmCachedTokens: number | null = null;
  if (prefixLen > 0) {
    log.info(`Warming shared prefix only (${prefixLen} tokens) ...`);
    const warm = await streamRequest(requestFor(bodies.warm, -1, pct, prefixLen, 1, ctx));
    if (!warm.ok) {
      if (warm.failureKind === "cancelled") throw new BenchError("interrupted during the warm request", EXIT.interrupted);
      throw new BenchError(
        `Warmup failed - Please make sure benchmark arguments are correctly specified. Error: ${warm.failureKind}: ${warm.failureMessage}`,
      );
    }
    warmCachedTokens = warm.cachedTokens;
  }

  const countersBefore = await scrapeCacheCounters(opts.baseUrl, ctx.headers);
  log.info(`Sending requests (max_concurrency=${opts.maxConcurrency}) ...`);
  const startedAt = new Date().toISOString();
  const monitor = startClientMonitor();
  const progress = startProgress(opts.numPrompts, `${pct}%`);
  const t0 = nowMs();
  const settled = await runPool(
    opts.numPrompts,
    opts.maxConcurrency,
    (i) => streamRequest(requestFor(bodies.build(i), i, pct, opts.totalTokens, opts.outputLen, ctx)),
    { signal: io.signal, onSettled: (_i, r) => progress.settled(r.ok) },
  );
  const durationS = (nowMs() - t0) / 1000;
  progress.stop();
  const health = monitor.stop();
  const interrupted = io.signal?.aborted === true;
  const countersAfter = await scrapeCacheCounters(opts.baseUrl, ctx.headers);
  // An interrupted pct is summarized from the requests that completed; the cancelled ones were never measured.
  const records = settled.filter((r): r is RequestRecord => r !== undefined && r.failureKind !== "cancelled");
  for (const r of records) resolveGeneratedText(r);
  logFailures(records);
  if (opts.requestDetails) appendRequestDetails(opts.requestDetails, ctx.runId, pct, records);

  const expectedCachedTokens = expectedCached(prefixLen, opts.totalTokens, ctx.pageSize);
  const cache = checkCache({
    records,
    expectedCachedTokens,
    promptLen: opts.totalTokens,
    // Without a flush there is nothing to prove: a warm hit on an earlier pct's cache is expected then.
    warmCachedTokens: opts.flush === "none" ? null : warmCachedTokens,
    flushProbeCachedTokens,
    mode: opts.verifyCache,
    tolerance: opts.cacheTolerance,
  });
  for (const problem of cache.problems) log.warn(`cache check (${pct}%): ${problem}`);
  const saturated = isSaturated(health);
  if (saturated) log.warn(`${pct}%: ${describeSaturation(health)}`);
  else log.debug(describeSaturation(health));
  for (const r of records) {
    if (!r.ok) continue;
    ctx.fit.uncached.push(r.promptLen - (r.cachedTokens >= 0 ? r.cachedTokens : expectedCachedTokens));
    ctx.fit.ttftMs.push(r.ttftMs);
  }

  const result = summarizePct({
    records,
    durationS,
    countTokens: ctx.tokenizer.countTokens,
    context: {
      backend: opts.backend,
      maxConcurrency: opts.maxConcurrency,
      pct,
      prefixLen,
      suffixLen,
      totalTokens: opts.totalTokens,
      numPrompts: opts.numPrompts,
      outputLen: opts.outputLen,
      expectedCachedTokens,
      pageSize: ctx.pageSize,
      interrupted,
      extra: {
        expected_hit_ratio: cache.expectedHitRatio,
        observed_hit_ratio: cache.observedHitRatio,
        cached_tokens_counts: cache.cachedTokensCounts,
        server_cache_hit_rate: hitRateBetween(countersBefore, countersAfter),
        flush_verified: cache.flushVerified,
        warm_verified: cache.warmVerified,
        cache_check: cache.status,
        flushed: opts.flush !== "none",
        flush_attempts: flushAttempts,
        warm_cached_tokens: warmCachedTokens,
        flush_probe_cached_tokens: flushProbeCachedTokens,
        client_loop_lag_p99_ms: health.loopLagP99Ms,
        client_loop_lag_max_ms: health.loopLagMaxMs,
        client_cpu_pct: health.cpuPct,
        client_saturated: saturated,
        type: "pct",
        warmbench_version: VERSION,
        started_at: startedAt,
        model: ctx.model ?? opts.model,
        tokenizer: ctx.tokenizer.path,
        population_size: ctx.tokenizer.population.length,
        seed: opts.seed.toString(),
        base_url: opts.baseUrl,
        server_version: ctx.server.version,
        text_mode: ctx.textMode,
        sent: records.length,
      },
    },
  });
  io.out(renderConsole(result));
  if (opts.outputFile) appendJsonlLine(opts.outputFile, formatJsonl(result));
  return { result, cacheFailed: cache.failsStrict, saturated };
}

/** A flush may retry for minutes while the server stays busy: a signal must not wait for it. */
function unlessInterrupted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  const interrupted = new Promise<never>((_, reject) => {
    const stop = () => reject(new BenchError("interrupted while flushing the cache", EXIT.interrupted));
    if (signal.aborted) stop();
    else signal.addEventListener("abort", stop, { once: true });
  });
  return Promise.race([work, interrupted]);
}

async function flush(ctx: SweepContext): Promise<number> {
  const o = ctx.opts;
  return (await ctx.backend.flush(o.baseUrl, { deadlineS: o.flushDeadlineS, serverTimeoutS: o.flushServerTimeoutS, headers: ctx.headers })).attempts;
}

/**
 * A flush that answers "done" proves nothing (old SGLang always said so; a buggy server may too). So: cache a
 * small canary prompt, flush, send the canary again - it must find nothing cached - then flush once more to
 * remove it. The canary's ids come from their own RNG, so the script's draw order is untouched. Returns the
 * cached tokens the canary found after the flush (-1 when it could not tell).
 */
async function flushAndProve(pct: number, ctx: SweepContext): Promise<{ attempts: number; probeCachedTokens: number }> {
  const { opts, backend, model, tokenizer } = ctx;
  const canaryLen = Math.max(65, 4 * ctx.pageSize + 1);
  const ids = new Uint32Array(canaryLen);
  new PyRandom(CANARY_SEED + BigInt(pct)).choicesInto(tokenizer.population, ids, 0, canaryLen);
  const template = backend.createBodyTemplate({ maxNewTokens: 1, ignoreEos: true, extra: {}, model });
  const body = bodyParts(template, serializeIds(ids), new Uint8Array(0));
  await streamRequest(requestFor(body, -2, pct, canaryLen, 1, ctx));
  let attempts = await flush(ctx);
  const probe = await streamRequest(requestFor(body, -2, pct, canaryLen, 1, ctx));
  attempts += await flush(ctx);
  if (!probe.ok) log.warn(`flush check (${pct}%): the canary request failed (${probe.failureKind}: ${probe.failureMessage})`);
  return { attempts, probeCachedTokens: probe.ok ? probe.cachedTokens : -1 };
}

/** Seed of the canary prompts' own RNG. */
const CANARY_SEED = 0x5eed_ca9a2n;

/** Cached tokens a measured request should report: the prefix in whole pages, at most promptLen-1 (SGLang). */
export function expectedCached(prefixLen: number, promptLen: number, pageSize: number): number {
  const cachable = Math.min(prefixLen, promptLen - 1);
  return Math.max(0, Math.floor(cachable / pageSize) * pageSize);
}

/** Serializes the prefix once and each suffix once; a body is then one memcpy, done before its clock starts. */
function prepareBodies(set: PromptSet, ctx: SweepContext) {
  const { opts, backend, model } = ctx;
  const ignoreEos = !opts.disableIgnoreEos;
  const measured = backend.createBodyTemplate({ maxNewTokens: opts.outputLen, ignoreEos, extra: opts.extraRequestBody, model });
  const warmTpl = backend.createBodyTemplate({ maxNewTokens: 1, ignoreEos, extra: opts.extraRequestBody, model });
  const prefixDigits = serializeIds(set.prefix);
  const suffixDigits: Uint8Array[] = [];
  for (let i = 0; i < set.numPrompts; i++) {
    suffixDigits.push(serializeIds(set.suffixes.subarray(i * set.suffixLen, (i + 1) * set.suffixLen)));
  }
  const empty = new Uint8Array(0);
  return {
    warm: bodyParts(warmTpl, prefixDigits, empty),
    build: (i: number) => bodyParts(measured, prefixDigits, suffixDigits[i] ?? empty),
  };
}

function requestFor(body: readonly Uint8Array[], index: number, pct: number, promptLen: number, maxNewTokens: number, ctx: SweepContext): StreamRequest {
  return {
    url: ctx.opts.baseUrl + ctx.backend.generatePath,
    backend: ctx.backend,
    body,
    headers: ctx.headers,
    requestId: ctx.opts.requestDetails && index >= 0 ? requestIdOf(ctx.runId, pct, index) : undefined,
    index,
    promptLen,
    maxNewTokens,
    textMode: ctx.textMode,
    requestTimeoutMs: ctx.opts.requestTimeoutS * 1000,
    stallTimeoutMs: ctx.opts.stallTimeoutS * 1000,
    signal: ctx.io.signal,
    deferText: true,
  };
}

function logFailures(records: RequestRecord[]): void {
  const failed = records.filter((r) => !r.ok);
  if (failed.length === 0) return;
  log.warn(`${failed.length}/${records.length} requests failed`);
  for (const r of failed.slice(0, 5)) log.warn(`  ${r.failureKind}: ${r.failureMessage.slice(0, 160)}`);
}
