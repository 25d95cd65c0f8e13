/**
 * The timed part of a point in one process: send a set of requests when they are due - at their arrival times (open
 * loop: a rate's Poisson/gamma schedule, or a trace's own send times), or as slots free up (closed loop) - never more
 * than `concurrency` in flight, one record per request, with the client's self-check around it. Nothing but
 * recording happens on the clock: the source hands over bodies already serialized, a look-ahead before they are due.
 * A producer says what to send (its RequestSource) and when (arrivalsMs); this does the how (client/dispatcher.ts).
 */
import { log } from "../log.ts";
import { dispatch } from "../client/dispatcher.ts";
import { nowMs } from "../client/clock.ts";
import type { RequestBody } from "../client/request-body.ts";
import { resolveGeneratedText } from "../client/stream-events.ts";
import { streamRequest } from "../client/stream.ts";
import type { RequestRecord } from "../schema/record.ts";
import { startClientMonitor, type ClientHealth } from "../metrics/self-check.ts";
import { idleCollector } from "./idle-gc.ts";
import type { ShardShare } from "./plan.ts";
import { streamRequestFor, type RequestContext, type RequestShape } from "./request.ts";
import { routedRequest } from "./routed-request.ts";
import { noProgress, type StartProgress } from "./sink.ts";
import type { PointMoments } from "./point-moments.ts";

/** One request as its source hands it over when it starts: the body, serialized, and what its record says. */
export interface SourcedRequest {
  body: RequestBody;
  /** The request's record fields (index, prompt length, output asked, x-request-id); its intended time is intendedOf's. */
  shape: Omit<RequestShape, "intendedMs">;
  /** What a later flush's probe is made of should this request be the last to finish well (a sweep prompt's first suffix ids). */
  probeHead?: Uint32Array;
  /** When it became ready (nowMs clock), where its source paces itself: its intended time is then the later of this and the free slot's. */
  readyAtMs?: number;
  /** Its intended time as its source's schedule has it (nowMs clock; an agentic session's), which a wait for a slot does not move. */
  scheduledMs?: number;
  /** What the router keys it on, where that is not its index (a turn: its round and conversation). */
  routeKey?: number;
}

/**
 * Where the requests come from, position 0, 1, 2, ... in order: a producer's prompts, drawn just in time (the
 * prompt worker's look-ahead), or all made at once (then `ready` is always true and `filled` resolves at once).
 */
export interface RequestSource {
  /** Request `position` can start now (its prompt has arrived). */
  ready(position: number): boolean;
  /** Request `position`, the next in order; called when it starts (its memory can be given back as it goes out). */
  take(position: number): SourcedRequest;
  /** Called when a prompt arrives, or when the source failed (then `failure` is set). */
  onArrival(listener: () => void): void;
  readonly failure: Error | null;
  /** Resolves once the look-ahead is full: awaited before the clock starts. */
  filled(): Promise<void>;
  /**
   * The source paces itself (a conversation's next turn waits for its answer and think time): a free slot with no
   * request ready is the workload, not the client falling behind.
   */
  readonly pacesItself?: boolean;
  /** True once no request not yet taken will ever be ready (conversations that ended early); absent: never. */
  exhausted?(): boolean;
}

export interface SendOptions {
  ctx: RequestContext;
  source: RequestSource;
  /** Requests this process sends. */
  count: number;
  /** Requests in flight at once, at most. */
  concurrency: number;
  /** Due times, ms from the start of sending, in order (at least `count`); null: closed loop. */
  arrivalsMs: Iterable<number> | null;
  /** The mean rate of the arrivals, req/s (Infinity in a closed loop): how long the dispatcher may busy-wait. */
  ratePerS: number;
  /** What the log calls the point ("50%"). */
  name: string;
  /** Live progress, shown as `label` (noProgress for none). */
  progress: { start: StartProgress; label: string };
  /** The run's interrupt: nothing new starts, requests in flight are cancelled (and left out of the records). */
  signal?: AbortSignal;
  /** When sending begins (nowMs clock), shared by every shard of a sharded point; now when absent. */
  startAtMs?: number;
  /** Each request's record as it ends, on the hot path (keep it short). */
  onSettled?(position: number, record: RequestRecord): void;
  /** The point's watches (run-point.ts): told of each request as it goes out and as it ends. */
  moments?: PointMoments;
  /** The answers' payloads are kept (a conversation's next turn is built from them). */
  keepPayloads?: boolean;
  /** False: the records are only handed to onSettled, not kept and returned (a run of conversations, whose rounds keep their own). */
  keepRecords?: boolean;
}

/** What one process measured of a point. */
export interface SendResult {
  /** Every request that ran to an end (cancelled ones were never measured and are left out), in position order. */
  records: RequestRecord[];
  /** The successful request whose last event came last, with its probe head (where its source gave one); null: none. */
  lastFinished: { index: number; probeHead: Uint32Array } | null;
  /** When sending began (the schedule's origin) and the last completion, nowMs() clock. */
  startMs: number;
  endMs: number;
  interrupted: boolean;
  health: ClientHealth;
}

/**
 * Longest busy-wait before a due time, ms: half a millisecond holds up other events at most that long and costs
 * ~2.5 % of a core at 200 req/s; a tenth of the mean gap at faster rates, so they do not keep the thread busy.
 */
const spinMsFor = (rate: number): number => Math.min(0.5, 100 / rate);

/** The due times of this process's requests: every one, or its shard's (rank, rank + size, ...). */
export function* shareOfArrivals(all: Iterable<number>, share: ShardShare | null): Generator<number, void, undefined> {
  let i = 0;
  for (const atMs of all) {
    if (share === null || (i >= share.rank && (i - share.rank) % share.size === 0)) yield atMs;
    i++;
  }
}

/**
 * A request's intended time: its schedule's where its source has one (an agentic session's: a wait for a slot does
 * not move it), else the later of when it became ready (a conversation's next turn) and `dueMs` (its arrival, or
 * the free slot's moment in a closed loop).
 */
export function intendedOf(r: Pick<SourcedRequest, "readyAtMs" | "scheduledMs">, dueMs: number): number {
  return r.scheduledMs ?? (r.readyAtMs === undefined ? dueMs : Math.max(dueMs, r.readyAtMs));
}

/** Resolves when the run is interrupted (never without a signal). */
export function abortOf(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) resolve();
    else signal?.addEventListener("abort", () => resolve(), { once: true });
  });
}

/** Waits, off every clock, until the source's look-ahead is full (an interrupt does not wait for it). */
export async function sourceFilled(source: Pick<RequestSource, "filled">, signal: AbortSignal | undefined): Promise<void> {
  await Promise.race([source.filled(), abortOf(signal)]);
}

/** Waits until `atMs` (nowMs clock): timers for all but the last millisecond, which is waited out on the spot. */
async function waitUntil(atMs: number, signal: AbortSignal | undefined): Promise<void> {
  const sleepMs = atMs - nowMs() - 1;
  if (sleepMs > 0) await Promise.race([Bun.sleep(sleepMs), abortOf(signal)]);
  while (nowMs() < atMs && !signal?.aborted);
}

/** Sends every request of `o.source` under the dispatcher; throws the source's failure (what was sent is lost then). */
export async function send(o: SendOptions): Promise<SendResult> {
  const { ctx, source, signal } = o;
  if (o.startAtMs !== undefined) await waitUntil(o.startAtMs, signal);
  const monitor = startClientMonitor();
  const progress = o.progress.start(o.count, o.progress.label);
  const sentMoment = o.moments?.sent;
  const settledMoment = o.moments?.settled;
  // Probe heads of the requests in flight only, so memory follows what is in flight, not the line's length.
  const heads = new Map<number, Uint32Array>();
  const last = { endMs: -Infinity, index: -1, probeHead: null as Uint32Array | null };
  const run = dispatch<RequestRecord>({
    count: o.count,
    concurrency: o.concurrency,
    arrivalsMs: o.arrivalsMs === null ? null : o.arrivalsMs[Symbol.iterator](),
    spinMs: spinMsFor(o.ratePerS),
    isReady: (position) => source.ready(position),
    start: (position, dueMs) => {
      const sourced = source.take(position);
      const { body, shape, probeHead, routeKey } = sourced;
      if (probeHead !== undefined) heads.set(position, probeHead);
      sentMoment?.();
      const request = { ...streamRequestFor(ctx, body, { ...shape, intendedMs: intendedOf(sourced, dueMs) }), signal, keepPayloads: o.keepPayloads === true };
      return ctx.router === undefined ? streamRequest(request) : routedRequest(ctx.router, request, routeKey ?? shape.index, ctx.backend.generatePath);
    },
    onSettled: (position, r) => {
      progress.settled(r.ok, r.outputLen);
      const head = heads.get(position);
      heads.delete(position);
      if (r.ok && r.lastEventMs > last.endMs && head !== undefined) {
        last.endMs = r.lastEventMs;
        last.index = r.index;
        last.probeHead = head;
      }
      o.onSettled?.(position, r);
      settledMoment?.(r);
    },
    exhausted: source.exhausted === undefined ? undefined : () => source.exhausted!(),
    keepResults: o.keepRecords !== false,
    signal,
  });
  source.onArrival(() => {
    if (source.failure) run.stop();
    else run.wake();
  });
  const settled = await run.done;
  const endMs = nowMs();
  progress.stop();
  const health = monitor.stop();
  if (run.notReadyWaits > 0 && source.pacesItself !== true) {
    log.warn(`${o.name}: ${run.notReadyWaits} requests were due before their prompt was drawn: the client fell behind (schedule_lag includes that wait)`);
  }
  if (source.failure) throw source.failure;
  const records = settled.filter((r): r is RequestRecord => r !== undefined && r.failureKind !== "cancelled");
  // Text is parsed only now: doing it as each stream ended would hold up the other streams' events.
  const collect = idleCollector();
  for (const r of records) {
    resolveGeneratedText(r);
    collect();
  }
  const lastFinished = last.probeHead === null ? null : { index: last.index, probeHead: last.probeHead };
  return { records, lastFinished, startMs: run.startMs, endMs, interrupted: signal?.aborted === true, health };
}

/**
 * How the requests of a source that paces itself go out (a run's conversations, an agentic replay's sessions, whose
 * send spans points): at most `count` from `source`, at most `concurrency` at once, each record handed to `onSettled`
 * (cancelled ones too); resolves with the client's health once every started request ended, and throws the source's
 * failure. The engine's own is selfPacedSend's; a test's is the dispatcher's with fake requests.
 */
export type SelfPacedSend = (
  source: RequestSource,
  count: number,
  concurrency: number,
  onSettled: (position: number, record: RequestRecord) => void,
) => Promise<ClientHealth>;

/** The engine's send for such a source: a closed loop in which the source says when each request is due, no records kept. */
export function selfPacedSend(ctx: RequestContext, name: string, o: { signal?: AbortSignal; keepPayloads?: boolean } = {}): SelfPacedSend {
  return async (source, count, concurrency, onSettled) => {
    const sent = await send({
      ctx,
      source,
      count,
      concurrency,
      arrivalsMs: null,
      ratePerS: Infinity,
      name,
      progress: { start: noProgress, label: name },
      signal: o.signal,
      onSettled,
      keepPayloads: o.keepPayloads === true,
      keepRecords: false,
    });
    return sent.health;
  };
}
