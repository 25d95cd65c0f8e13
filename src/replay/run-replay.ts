/**
 * One trace replay through the measurement engine: prepare (tokenizer, backend, preflight), check the trace against
 * the model's context, reset and prove the cache, send every request at its (scaled) timestamp - or in trace order
 * under a concurrency limit - with token-exact prompts built just in time, then predict and judge every request's
 * cache hit from what the client saw, and summarize one point per window of trace time and one for the whole.
 * Nothing here parses flags, renders or writes files (the sink does).
 */
import { BenchError } from "../errors.ts";
import { log } from "../log.ts";
import type { BodyTemplate } from "../backends/body.ts";
import { prepareRun } from "../engine/prepare.ts";
import { canaryIds, cacheSlotsOf, resetCache } from "../engine/reset-cache.ts";
import { measure } from "../engine/measure.ts";
import { newRunId, runInfo } from "../engine/run-info.ts";
import { requestIdOf } from "../engine/request-id.ts";
import type { SweepLine } from "../metrics/sweep-line.ts";
import { checkFidelity, fidelityOptions, type FidelitySample } from "../engine/fidelity-check.ts";
import type { FidelityGroup } from "../metrics/fidelity.ts";
import { expectPoint, modelCapacityOf } from "../metrics/point-expectations.ts";
import { UNKNOWN_BEHAVIOUR } from "../config/cache-behaviour.ts";
import type { CacheSequence } from "../metrics/cache-model.ts";
import { prepareReplicas, resetReplicas, type ReplicaSet } from "../engine/replica-set.ts";
import { ReplicaRouter } from "../engine/replica-router.ts";
import { hitLedger, ledgerTermsJson } from "../metrics/hit-ledger.ts";
import { ledgerKeys } from "../metrics/ledger-keys.ts";
import type { Backend, ServerProfile } from "../backends/types.ts";
import type { Control } from "../backends/http.ts";
import { BlockSource } from "./blocks.ts";
import { judge, predictionOf, type CheckedRequest, type Prediction } from "./check.ts";
import { dumpPrompts } from "./dump.ts";
import type { ReplayOptions } from "./options.ts";
import { replayPoints } from "./points.ts";
import type { ReplaySink } from "./sink.ts";
import { TraceSource } from "./source.ts";
import { checkContext, type Trace } from "./trace.ts";

export interface ReplayOutcome {
  records: SweepLine[];
  interrupted: boolean;
  failedRequests: number;
  /** Lines whose cache check failed under --verify-cache strict. */
  cacheFailures: number;
  saturated: number;
}

export async function runReplay(opts: ReplayOptions, parsed: Trace, io: { sink: ReplaySink; signal?: AbortSignal }): Promise<ReplayOutcome> {
  const { ctl, tokenizer, backend, server } = await prepareRun(opts, io.signal);
  const context = server.info.contextLength ?? null;
  const trace = checkContext(parsed, context, opts.trace.skipInvalid);
  const tooLong = parsed.requests.length - trace.requests.length;
  if (tooLong > 0) log.warn(`--skip-invalid: ${tooLong} request(s) of ${trace.path} longer than the model's context of ${context} tokens dropped`);
  if (backend.promptEncoding !== "token_ids") throw new BenchError(`replay sends token ids; the ${backend.name} backend sends text`);
  const requests = trace.requests;
  const capacityTokens = opts.cacheTokens ?? server.info.cacheCapacityTokens ?? null;
  const canaryMax = Math.min(...requests.map((r) => r.inputLength));
  // No block starts with the flush proof's canary (it stays cached): a block could otherwise find one token cached.
  const canaryFirst = tokenizer.population.indexOf(canaryIds(server.pageSize, canaryMax, tokenizer.population)[0]!);
  const blocks = new BlockSource(tokenizer.population, opts.seed, trace.blockSize, canaryFirst);
  if (opts.dumpPrompts) dumpPrompts(requests, blocks, io.sink);

  const runId = newRunId();
  const ctx = { opts, io: { signal: io.signal }, backend, ctl, server, tokenizer };
  const resetInput = {
    probeIds: null,
    canaryMaxTokens: canaryMax,
    slots: cacheSlotsOf(server),
    prefixes: [],
    prefixLen: 0,
    learnTemplateHead: false,
    label: "replay",
  };
  // Several replicas: each flushed and proven on its own; the trace's requests routed by their root block.
  const set = opts.replicas === undefined ? null : await prepareReplicas(opts, { ctl, server, backend });
  const reset = set === null ? await resetCache(ctx, resetInput) : await resetReplicas(ctx, set, resetInput);
  const router = set === null ? undefined : traceRouter(opts, set, requests);
  const templates = new Map<number, BodyTemplate>();
  const templateFor = (maxNewTokens: number): BodyTemplate => {
    let t = templates.get(maxNewTokens);
    if (t === undefined) {
      t = backend.createBodyTemplate({ maxNewTokens, ignoreEos: !opts.disableIgnoreEos, extra: opts.extraRequestBody, model: server.model });
      templates.set(maxNewTokens, t);
    }
    return t;
  };
  const source = new TraceSource(requests, blocks, templateFor, (index) => requestIdOf(runId, "replay", index));
  const t0 = requests[0]!.timestampMs;
  const arrivalsMs = opts.ignoreTimestamps ? null : requests.map((r) => (r.timestampMs - t0) * opts.timeScale);
  const spanS = arrivalsMs === null ? 0 : arrivalsMs.at(-1)! / 1000;
  const how = arrivalsMs === null ? `closed loop, ${opts.maxConcurrency} at once` : `over ${spanS.toFixed(1)} s (time scale ${opts.timeScale})`;
  const m = await measure({
    ctx: router === undefined ? ctx : { ...ctx, router },
    source,
    count: requests.length,
    concurrency: opts.maxConcurrency > 0 ? opts.maxConcurrency : requests.length,
    arrivalsMs,
    ratePerS: arrivalsMs === null ? Infinity : requests.length / Math.max(spanS, 0.001),
    name: "replay",
    progress: { start: io.sink.progress, label: "replay" },
    announce: `Replaying ${requests.length} requests of ${trace.path} ${how} ...`,
  });
  // The one cache model, on the replica that served each request (one server: all of them).
  const sequenceOf = (index: number): CacheSequence | undefined => {
    const r = requests[index];
    return r === undefined ? undefined : { hashIds: r.hashIds, length: r.inputLength };
  };
  const behaviour = opts.serverCache ?? UNKNOWN_BEHAVIOUR;
  const model = { sequenceOf, records: m.records, pageSize: server.pageSize, blockSize: trace.blockSize, behaviour };
  const capacityOf = (r: number): number | null => opts.cacheTokens ?? modelCapacityOf(set === null ? server.info : set.servers[r]!.info);
  const ledger =
    set === null || router === undefined
      ? null
      : hitLedger({
          ...model,
          replicaOf: (index) => router.assigned.get(index) ?? null,
          homeKeyOf: (index) => requests[index]?.hashIds[0] ?? null,
          replicas: set.urls.map((url, r) => ({ url, capacityTokens: capacityOf(r), warmed: [] })),
        });
  const replicaKeys =
    set === null || router === undefined || ledger === null
      ? null
      : ledgerKeys(
          ledger,
          router.policy,
          set.urls.map((url, r) => ({ url, serverVersion: set.servers[r]!.info.version, cacheCapacityTokens: set.servers[r]!.info.cacheCapacityTokens })),
        );
  const expected = expectPoint({
    ...model,
    serverOf: (index) => (router === undefined ? 0 : (router.assigned.get(index) ?? null)),
    servers: (set === null ? [null] : set.urls).map((_, r) => ({ capacityTokens: capacityOf(r), prior: [] })),
  });
  const predictions = new Map<number, Prediction | null>(m.records.map((r) => [r.index, predictionOf(expected.get(r.index))]));
  const checked = new Map<number, CheckedRequest>(m.records.map((r) => [r.index, judge(r, predictions.get(r.index) ?? null)]));
  io.sink.details(runId, m.records, requests, checked, (index) => {
    if (router === undefined) return undefined;
    const replica = router.assigned.get(index);
    const terms = ledger?.perRequest.get(index);
    return {
      replica: replica ?? null,
      replica_url: replica === undefined || set === null ? null : set.urls[replica]!,
      ledger: terms === undefined ? null : ledgerTermsJson(terms),
    };
  });
  const run = runInfo(opts, server, backend);
  const fidelity =
    opts.fidelity !== undefined && !m.interrupted ? await checkReplayFidelity(opts, requests, predictions, blocks, { backend, ctl, server }) : null;
  const points = replayPoints({
    trace,
    m,
    checked,
    reset,
    opts,
    capacityTokens,
    summary: { opts: summaryOpts(opts, requests), server, tokenizer, backend, runId, run },
    fidelity,
    replicaKeys,
  });
  const outcome: ReplayOutcome = { records: [], interrupted: m.interrupted, failedRequests: 0, cacheFailures: 0, saturated: 0 };
  for (const record of points) {
    io.sink.line(record);
    outcome.records.push(record);
    if (record.window === undefined) {
      outcome.failedRequests = record.failed;
      if (opts.verifyCache === "strict" && (record.cache_check === "mismatch" || record.cache_check === "unreported")) outcome.cacheFailures++;
      if (record.client_saturated) outcome.saturated++;
    }
  }
  if (!m.interrupted && m.records.length > 0 && m.records.every((r) => !r.ok)) throw new BenchError(`All ${m.records.length} replayed requests failed.`);
  log.debug(`replay: ${points.length} lines`);
  return outcome;
}

/**
 * --check-fidelity, after the replay (nothing is measured after it): up to --fidelity-sample of the requests an
 * infinite cache would have served a prefix to (evenly spread over the trace), each asked cold and then warm after
 * that prefix alone, with the trace's own prompt.
 */
async function checkReplayFidelity(
  opts: ReplayOptions,
  requests: Trace["requests"],
  predictions: ReadonlyMap<number, Prediction | null>,
  blocks: BlockSource,
  ctx: { backend: Backend; ctl: Control; server: ServerProfile },
): Promise<FidelityGroup> {
  const f = opts.fidelity!;
  const hits = requests.map((r, index) => ({ r, index })).filter(({ index }) => (predictions.get(index)?.infinite ?? 0) > 0);
  const step = Math.max(1, Math.floor(hits.length / f.sample));
  const samples: FidelitySample[] = hits
    .filter((_, k) => k % step === 0)
    .slice(0, f.sample)
    .map(({ r, index }) => ({ ids: [...blocks.prompt(r)], prefixLen: predictions.get(index)?.infinite ?? 0 }));
  const outputLen = Math.max(1, Math.round(requests.reduce((a, r) => a + r.outputLength, 0) / requests.length));
  return checkFidelity({ backend: ctx.backend, ctl: ctx.ctl }, samples, fidelityOptions({ opts, server: ctx.server }, outputLen));
}

/** The run options summarizePoint reads, as a replay means them: the trace's own lengths and gaps. */
function summaryOpts(opts: ReplayOptions, requests: Trace["requests"]) {
  const meanOut = Math.round(requests.reduce((a, r) => a + r.outputLength, 0) / requests.length);
  return { ...opts, outputLen: meanOut, burstiness: 1, durationS: null, gates: [], maxConcurrency: opts.maxConcurrency };
}

/** A trace's sessions are its root blocks: requests sharing their first block share a conversation's or a system prompt's prefix. */
function traceRouter(opts: ReplayOptions, set: ReplicaSet, requests: Trace["requests"]): ReplicaRouter {
  const root = (index: number) => requests[index]?.hashIds[0] ?? index;
  return new ReplicaRouter(set.urls, opts.replicas!.route, (index) => ({ session: root(index), prefix: root(index) }), {
    seed: opts.seed,
    prefixes: [],
    prefixesHeld: set.urls.map(() => null),
    warmedEverywhere: true,
    via: opts.replicas!.via,
  });
}
