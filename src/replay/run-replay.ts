/**
 * One trace replay as a point of the engine (src/engine/run-point.ts): prepare (tokenizer, backend, preflight), check
 * the trace against the model's context, then plan the point - reset and prove the cache, send every request at its
 * (scaled) timestamp, or in trace order under a concurrency limit, with token-exact prompts built just in time, route
 * by root block, read each request as its hash-id chain for the cache model; the engine makes its lines from the
 * trace (engine/replay-lines.ts): each request judged against its range, one line per window of trace time and one
 * for the whole. Nothing here parses flags, renders or
 * writes files (the sink does).
 */
import { BenchError } from "../errors.ts";
import { log } from "../log.ts";
import type { BodyTemplate } from "../backends/body.ts";
import { openSession } from "../engine/open-session.ts";
import { canaryIds, cacheSlotsOf } from "../engine/reset-cache.ts";
import { requestIdOf } from "../engine/request-id.ts";
import type { SweepLine } from "../metrics/sweep-line.ts";
import type { FidelitySample } from "../engine/fidelity-check.ts";
import type { MeasuredPoint, PointPlan } from "../engine/point-plan.ts";
import { replayLines } from "../engine/replay-lines.ts";
import { BlockSource } from "./blocks.ts";
import { predictionOf, type Prediction } from "../metrics/replay-check.ts";
import { dumpPrompts } from "./dump.ts";
import type { ReplayOptions } from "./options.ts";
import type { ReplaySink } from "./sink.ts";
import { TraceSource } from "./source.ts";
import { checkContext, type Trace } from "../workload/trace.ts";

export interface ReplayOutcome {
  records: SweepLine[];
  interrupted: boolean;
  failedRequests: number;
  /** Lines whose cache check failed under --verify-cache strict. */
  cacheFailures: number;
  saturated: number;
}

export async function runReplay(opts: ReplayOptions, parsed: Trace, io: { sink: ReplaySink; signal?: AbortSignal }): Promise<ReplayOutcome> {
  let trace = parsed;
  // The trace against the model's context, before anything else is asked of the servers.
  const session = await openSession(opts, io.signal, {
    checked: (server) => {
      const context = server.info.contextLength ?? null;
      trace = checkContext(parsed, context, opts.trace.skipInvalid);
      const tooLong = parsed.requests.length - trace.requests.length;
      if (tooLong > 0) log.warn(`--skip-invalid: ${tooLong} request(s) of ${trace.path} longer than the model's context of ${context} tokens dropped`);
    },
  });
  const { tokenizer, backend, server, runId, run } = session;
  if (backend.promptEncoding !== "token_ids") throw new BenchError(`replay sends token ids; the ${backend.name} backend sends text`);
  const requests = trace.requests;
  const canaryMax = Math.min(...requests.map((r) => r.inputLength));
  // No block starts with the flush proof's canary (it stays cached): a block could otherwise find one token cached.
  const canaryFirst = tokenizer.population.indexOf(canaryIds(server.pageSize, canaryMax, tokenizer.population)[0]!);
  const blocks = new BlockSource(tokenizer.population, opts.seed, trace.blockSize, canaryFirst);
  if (opts.dumpPrompts) dumpPrompts(requests, blocks, io.sink);

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
  // A trace's sessions are its root blocks: requests sharing their first block share a conversation's or a system prompt's prefix.
  const root = (index: number): number => requests[index]?.hashIds[0] ?? index;
  const predictionsOf = (point: MeasuredPoint) =>
    new Map<number, Prediction | null>(point.measurement.records.map((r) => [r.index, predictionOf(point.ranges?.get(r.index))]));
  const plan: PointPlan<SweepLine> = {
    reset: {
      probeIds: null,
      canaryMaxTokens: canaryMax,
      slots: cacheSlotsOf(server),
      prefixes: [],
      prefixLen: 0,
      learnTemplateHead: false,
      label: "replay",
    },
    route: { keysOf: (index) => ({ session: root(index), prefix: root(index) }), prefixes: [], prefixTokens: 0, warmedEverywhere: true },
    warm: null,
    send: {
      source,
      count: requests.length,
      concurrency: opts.maxConcurrency > 0 ? opts.maxConcurrency : requests.length,
      arrivalsMs,
      ratePerS: arrivalsMs === null ? Infinity : requests.length / Math.max(spanS, 0.001),
      name: "replay",
      progress: { start: io.sink.progress, label: "replay" },
      announce: `Replaying ${requests.length} requests of ${trace.path} ${how} ...`,
    },
    // The one cache model, on the replica that served each request (one server: all of them).
    cache: {
      sequenceOf: (index) => {
        const r = requests[index];
        return r === undefined ? undefined : { hashIds: r.hashIds, length: r.inputLength };
      },
      warmedSequenceOf: () => ({ hashIds: [], length: 0 }),
      homeKeyOf: (index) => requests[index]?.hashIds[0] ?? null,
      blockSize: trace.blockSize,
      capacityTokens: opts.cacheTokens ?? undefined,
    },
    fidelity:
      opts.fidelity === undefined
        ? null
        : { samples: (point) => fidelitySamples(opts, requests, predictionsOf(point), blocks), outputLen: meanOutputLen(requests) },
    lines: replayLines({
      trace,
      replay: opts,
      modelCapacityTokens: opts.cacheTokens ?? undefined,
      summary: { opts: summaryOpts(opts, requests), server, tokenizer, backend, runId, run },
      sink: io.sink,
    }),
  };
  const { lines: points, point } = await session.runPoint(plan);
  const m = point.measurement;
  // A signal during the replay's studies (its fidelity check, after the last request) ends no line early, but the
  // replay was interrupted: exit 130, as a sweep's and a multi-turn run's.
  const interrupted = m.interrupted || io.signal?.aborted === true;
  const outcome: ReplayOutcome = { records: [], interrupted, failedRequests: 0, cacheFailures: 0, saturated: 0 };
  for (const record of points) {
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

/** The answers' length a trace asks for on average (the fidelity samples' answers). */
const meanOutputLen = (requests: Trace["requests"]): number => Math.max(1, Math.round(requests.reduce((a, r) => a + r.outputLength, 0) / requests.length));

/**
 * --check-fidelity's samples, after the replay (nothing is measured after it): up to --fidelity-sample of the
 * requests an infinite cache would have served a prefix to (evenly spread over the trace), each asked cold and then
 * warm after that prefix alone, with the trace's own prompt.
 */
function fidelitySamples(
  opts: ReplayOptions,
  requests: Trace["requests"],
  predictions: ReadonlyMap<number, Prediction | null>,
  blocks: BlockSource,
): FidelitySample[] {
  const f = opts.fidelity!;
  const hits = requests.map((r, index) => ({ r, index })).filter(({ index }) => (predictions.get(index)?.infinite ?? 0) > 0);
  const step = Math.max(1, Math.floor(hits.length / f.sample));
  return hits
    .filter((_, k) => k % step === 0)
    .slice(0, f.sample)
    .map(({ r, index }) => ({ ids: [...blocks.prompt(r)], prefixLen: predictions.get(index)?.infinite ?? 0 }));
}

/** The run options summarizePoint reads, as a replay means them: the trace's own lengths and gaps. */
function summaryOpts(opts: ReplayOptions, requests: Trace["requests"]) {
  const meanOut = Math.round(requests.reduce((a, r) => a + r.outputLength, 0) / requests.length);
  return { ...opts, outputLen: meanOut, burstiness: null, durationS: null, gates: [], maxConcurrency: opts.maxConcurrency };
}
