/**
 * Stage: one line's requests, sent when due (at --request-rate, or as slots free up) under the concurrency limit,
 * one record per request; around it, the client's self-check and the server's cache counters. Nothing but
 * recording happens on the clock: prompts arrive serialized from the worker, a look-ahead before they are due.
 */
import { log } from "../../log.ts";
import { dispatch } from "../../client/dispatcher.ts";
import { nowMs } from "../../client/clock.ts";
import { hitRateBetween, scrapeCacheCounters } from "../../client/prometheus.ts";
import { resolveGeneratedText, streamRequest } from "../../client/stream.ts";
import type { RequestRecord } from "../../metrics/record.ts";
import { startClientMonitor, type ClientHealth } from "../../metrics/self-check.ts";
import { requestIdOf } from "../../report/details.ts";
import { startProgress } from "../../report/progress.ts";
import { arrivalOffsetsMs } from "../../workload/arrivals.ts";
import type { SweepContext } from "../context.ts";
import type { LinePlan, PctPlan } from "../plan.ts";
import { idleCollector } from "../idle-gc.ts";
import { streamRequestFor } from "../request.ts";
import type { LinePrompts, PromptBatch } from "./build-prompts.ts";

export interface Measurement {
  /** Every request that ran to an end (cancelled ones were never measured and are left out). */
  records: RequestRecord[];
  /** nowMs() when sending began: the schedule's origin. */
  t0Ms: number;
  /** From the first send to the last completion, seconds (the script's benchmark_duration). */
  durationS: number;
  startedAt: string;
  /** The run was interrupted during this line. */
  interrupted: boolean;
  health: ClientHealth;
  /** Hit rate from the server's Prometheus counters over the measured window; null without /metrics. */
  serverHitRate: number | null;
  /** The first ids of the prompt that finished last (the next flush's probe); null when none succeeded. */
  lastFinishedProbeIds: Uint32Array | null;
}

/** Resolves when the run is interrupted (never without a signal). */
function abortOf(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) resolve();
    else signal?.addEventListener("abort", () => resolve(), { once: true });
  });
}

/**
 * Longest busy-wait before a due time, ms: half a millisecond holds up other events at most that long and costs
 * ~2.5 % of a core at 200 req/s; a tenth of the mean gap at faster rates, so they do not keep the thread busy.
 */
const spinMsFor = (rate: number): number => Math.min(0.5, 100 / rate);

/** Sends the line's `prompts` (opened by the caller, who closes them). */
export async function measure(plan: PctPlan, line: LinePlan, batch: PromptBatch, prompts: LinePrompts, ctx: SweepContext): Promise<Measurement> {
  const { opts, io } = ctx;
  // Off the clock: the look-ahead fills before the first request is due (an interrupt does not wait for it).
  await Promise.race([prompts.filled(), abortOf(io.signal)]);
  const countersBefore = await scrapeCacheCounters(ctx.ctl);
  const rate = Number.isFinite(line.rate) ? `${line.rate} req/s` : "as slots free up";
  log.info(`Sending ${line.count} requests (${rate}, max_concurrency=${opts.maxConcurrency}) ...`);
  const startedAt = new Date().toISOString();
  const monitor = startClientMonitor();
  const label = opts.requestRates.length > 1 ? `${plan.pct}% @ ${rate}` : `${plan.pct}%`;
  const progress = startProgress(line.count, label);
  const last = { endMs: -Infinity, suffixHead: null as Uint32Array | null };
  const heads = new Map<number, Uint32Array>();
  const run = dispatch<RequestRecord>({
    count: line.count,
    concurrency: line.inFlight,
    arrivalsMs: Number.isFinite(line.rate)
      ? arrivalOffsetsMs({ ratePerS: line.rate, burstiness: opts.burstiness, seed: opts.seed, count: line.count, durationS: opts.durationS })
      : null,
    spinMs: spinMsFor(line.rate),
    isReady: (i) => prompts.ready(i),
    start: (i, intendedMs) => {
      const { body, suffixHead } = prompts.body(i);
      heads.set(i, suffixHead);
      return streamRequest(
        streamRequestFor(ctx, body, {
          index: i,
          promptLen: plan.promptLen,
          maxNewTokens: opts.outputLen,
          intendedMs,
          requestId: opts.requestDetails ? requestIdOf(ctx.runId, plan.pct, i, opts.requestRates.length > 1 ? line.rate : null) : undefined,
        }),
      );
    },
    onSettled: (i, r) => {
      progress.settled(r.ok);
      const head = heads.get(i);
      heads.delete(i);
      if (r.ok && r.lastEventMs > last.endMs && head !== undefined) {
        last.endMs = r.lastEventMs;
        last.suffixHead = head;
      }
    },
    signal: io.signal,
  });
  prompts.onArrival(() => {
    if (prompts.failure) run.stop();
    else run.wake();
  });
  const settled = await run.done;
  const durationS = (nowMs() - run.startMs) / 1000;
  if (run.notReadyWaits > 0) {
    log.warn(`${plan.pct}%: ${run.notReadyWaits} requests were due before their prompt was drawn: the client fell behind (schedule_lag includes that wait)`);
  }
  progress.stop();
  const health = monitor.stop();
  if (prompts.failure) throw prompts.failure;
  const interrupted = io.signal?.aborted === true;
  const countersAfter = interrupted ? null : await scrapeCacheCounters(ctx.ctl);
  const records = settled.filter((r): r is RequestRecord => r !== undefined && r.failureKind !== "cancelled");
  // Text is parsed only now: doing it as each stream ended would hold up the other streams' events.
  const collect = idleCollector();
  for (const r of records) {
    resolveGeneratedText(r, ctx.backend);
    collect();
  }
  return {
    records,
    t0Ms: run.startMs,
    durationS,
    startedAt,
    interrupted,
    health,
    serverHitRate: hitRateBetween(countersBefore, countersAfter),
    lastFinishedProbeIds: last.suffixHead === null ? null : batch.probeIds(last.suffixHead),
  };
}
