/**
 * The timed part of a line in one process: send this process's prompts (all of them, or its shard's share) when
 * they are due - at --request-rate, or as slots free up - under its concurrency limit, one record per request, with
 * the client's self-check around it. Nothing but recording happens on the clock: prompts arrive serialized, a
 * look-ahead before they are due.
 */
import { log } from "../../log.ts";
import { dispatch } from "../../client/dispatcher.ts";
import { nowMs } from "../../client/clock.ts";
import { resolveGeneratedText, streamRequest } from "../../client/stream.ts";
import type { RequestRecord } from "../../schema/record.ts";
import { startClientMonitor, type ClientHealth } from "../../metrics/self-check.ts";
import { requestIdOf } from "../../engine/request-id.ts";
import { arrivalOffsetsMs } from "../../workload/arrivals.ts";
import type { SweepContext } from "../context.ts";
import { idleCollector } from "../../engine/idle-gc.ts";
import type { LinePlan, PctPlan } from "../plan.ts";
import type { ShardShare } from "../../engine/plan.ts";
import { streamRequestFor } from "../../engine/request.ts";
import type { LinePrompts } from "./build-prompts.ts";

/** What one process measured of a line. */
export interface ShareMeasurement {
  /** Every request that ran to an end (cancelled ones were never measured and are left out). */
  records: RequestRecord[];
  /** When sending began (the schedule's origin) and the last completion, nowMs() clock. */
  startMs: number;
  endMs: number;
  interrupted: boolean;
  health: ClientHealth;
  /** The prompt that finished last (the next flush's probe): its index and its suffix's first ids; null when none succeeded. */
  lastFinished: { index: number; suffixHead: Uint32Array } | null;
}

/**
 * Longest busy-wait before a due time, ms: half a millisecond holds up other events at most that long and costs
 * ~2.5 % of a core at 200 req/s; a tenth of the mean gap at faster rates, so they do not keep the thread busy.
 */
const spinMsFor = (rate: number): number => Math.min(0.5, 100 / rate);

/** The due times of this process's requests: every one of the line's, or its shard's (rank, rank + size, ...). */
function* shareOfArrivals(all: Iterable<number>, share: ShardShare | null): Generator<number, void, undefined> {
  let i = 0;
  for (const atMs of all) {
    if (share === null || (i >= share.rank && (i - share.rank) % share.size === 0)) yield atMs;
    i++;
  }
}

/** Resolves when the run is interrupted (never without a signal). */
export function abortOf(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) resolve();
    else signal?.addEventListener("abort", () => resolve(), { once: true });
  });
}

/** Waits, off every clock, until the line's look-ahead is full (an interrupt does not wait for it). */
export async function promptsFilled(prompts: LinePrompts, signal: AbortSignal | undefined): Promise<void> {
  await Promise.race([prompts.filled(), abortOf(signal)]);
}

/** Waits until `atMs` (nowMs clock): timers for all but the last millisecond, which is waited out on the spot. */
async function waitUntil(atMs: number, signal: AbortSignal | undefined): Promise<void> {
  const sleepMs = atMs - nowMs() - 1;
  if (sleepMs > 0) await Promise.race([Bun.sleep(sleepMs), abortOf(signal)]);
  while (nowMs() < atMs && !signal?.aborted);
}

/**
 * Sends the line's `prompts` (opened by the caller, who closes them). `startAtMs` (nowMs clock) is when the line's
 * schedule begins, shared by every shard of a sharded run; now when absent.
 */
export async function measureShare(
  plan: PctPlan, line: LinePlan, prompts: LinePrompts, ctx: SweepContext, signal: AbortSignal | undefined, startAtMs?: number,
): Promise<ShareMeasurement> {
  const { opts } = ctx;
  if (startAtMs !== undefined) await waitUntil(startAtMs, signal);
  const monitor = startClientMonitor();
  const rate = Number.isFinite(line.rate) ? `${line.rate} req/s` : "as slots free up";
  const label = opts.requestRates.length > 1 ? `${plan.pct}% @ ${rate}` : `${plan.pct}%`;
  const progress = ctx.io.sink.progress(line.sends, label);
  const last = { endMs: -Infinity, index: -1, suffixHead: null as Uint32Array | null };
  const heads = new Map<number, Uint32Array>();
  const run = dispatch<RequestRecord>({
    count: line.sends,
    concurrency: line.inFlight,
    arrivalsMs: Number.isFinite(line.rate)
      ? shareOfArrivals(arrivalOffsetsMs({ ratePerS: line.rate, burstiness: opts.burstiness, seed: opts.seed, count: line.count, durationS: opts.durationS }), plan.share)
      : null,
    spinMs: spinMsFor(line.rate),
    isReady: (position) => prompts.ready(position),
    start: (position, intendedMs) => {
      const i = plan.indexAt(position);
      const { body, suffixHead } = prompts.body(position);
      heads.set(position, suffixHead);
      return streamRequest({
        ...streamRequestFor(ctx, body, {
          index: i,
          promptLen: plan.promptLen,
          maxNewTokens: opts.outputLen,
          intendedMs,
          requestId: opts.requestDetails ? requestIdOf(ctx.runId, line.requestIdTag, i) : undefined,
        }),
        signal,
      });
    },
    onSettled: (position, r) => {
      progress.settled(r.ok, r.outputLen);
      const head = heads.get(position);
      heads.delete(position);
      if (r.ok && r.lastEventMs > last.endMs && head !== undefined) {
        last.endMs = r.lastEventMs;
        last.index = r.index;
        last.suffixHead = head;
      }
    },
    signal,
  });
  prompts.onArrival(() => {
    if (prompts.failure) run.stop();
    else run.wake();
  });
  const settled = await run.done;
  const endMs = nowMs();
  progress.stop();
  const health = monitor.stop();
  if (run.notReadyWaits > 0) {
    log.warn(`${plan.pct}%: ${run.notReadyWaits} requests were due before their prompt was drawn: the client fell behind (schedule_lag includes that wait)`);
  }
  if (prompts.failure) throw prompts.failure;
  const records = settled.filter((r): r is RequestRecord => r !== undefined && r.failureKind !== "cancelled");
  // Text is parsed only now: doing it as each stream ended would hold up the other streams' events.
  const collect = idleCollector();
  for (const r of records) {
    resolveGeneratedText(r);
    collect();
  }
  return {
    records,
    startMs: run.startMs,
    endMs,
    interrupted: signal?.aborted === true,
    health,
    lastFinished: last.suffixHead === null ? null : { index: last.index, suffixHead: last.suffixHead },
  };
}
