/**
 * The measurement engine: what every producer (the sweep, multi-turn, capacity search, trace replay, --repeat) calls
 * to measure a point. The producer says WHAT to send (its prompts, their send times, its axes); the engine does HOW.
 * The sequence, as src/sweep/run-pct.ts runs it per line:
 *
 *   once per run:   prepareRun(opts, signal)              -> ctl, tokenizer, backend, server (preflight)
 *                   newRunId(), runInfo(opts, server, backend); startShardGroup(placement, setup) for --workers/--shard
 *   per point:      resetCache(ctx, { probeIds, ... })     -> CacheReset (flush, then a probe proves it empty)
 *                   warm(ctx, requests, wording)           -> WarmResult (the prefix once, or once per slot)
 *                   measure({ ctx, source, count, concurrency, arrivalsMs, ratePerS, name, progress,
 *                             shards?: { group, job } })   -> Measurement (records, window, health, counters;
 *                                                             across shards: every shard's records on this clock)
 *                   summarizePoint(spec, reset, warm, m, ctx) -> { record: the line (axes as data: spec.axes may add
 *                                                             repeat / probe / window), cache verdict, TTFT moments }
 *                   sink.line(record)                      (the producer's sink, built by the command line)
 *   next point:     nextProbe(reset.probeIds, last finished prompt's ids, ...) -> the next reset's probe
 *
 * `source` (send.ts RequestSource) hands over serialized bodies by position, just in time (ready/take/onArrival) or
 * all at once; `arrivalsMs` is any iterable of due times (arrivalOffsetsMs for a rate, a trace's own times; a shard
 * takes shareOfArrivals of them), or null for a closed loop where each request goes as one of `concurrency` slots
 * frees. A shard worker calls send() with the coordinator's common start (startAtMs) and reports its records.
 */
export { prepareRun, type PreparedRun } from "./prepare.ts";
export { newRunId, runInfo } from "./run-info.ts";
export { cacheSlotsOf, nextProbe, resetCache, type CacheReset } from "./reset-cache.ts";
export { warm, type WarmRequest, type WarmResult } from "./warm.ts";
export { abortOf, send, shareOfArrivals, sourceFilled, type RequestSource, type SendOptions, type SendResult, type SourcedRequest } from "./send.ts";
export { sendAcrossShards, startShardGroup, type ShardGroup, type ShardJob } from "./gather.ts";
export { measure, type Measurement, type MeasureOptions } from "./measure.ts";
export { summarizePoint, type ExtraAxes, type Expectations, type PointSpec, type PointSummary, type SummaryContext } from "./summarize.ts";
export { requestIdOf } from "./request-id.ts";
export { noProgress, type PointSink, type StartProgress } from "./sink.ts";
export { fatalLine, type PointSession } from "./session.ts";
