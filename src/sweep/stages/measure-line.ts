/**
 * A line of the sweep measured: what it sends, in the engine's terms (src/engine/send.ts) - this process's prompts
 * (all of them, or its shard's share) as a request source, at --request-rate's arrivals or as slots free up, under the
 * line's concurrency limit - as the engine measures it (src/engine/measure.ts) in this process or across the shards it
 * coordinates, and the probe the next flush needs: the first ids of the prompt this process saw finish last.
 */
import { requestIdOf } from "../../engine/request-id.ts";
import { send, shareOfArrivals, type RequestSource, type SendOptions, type SendResult } from "../../engine/send.ts";
import { arrivalOffsetsMs } from "../../workload/arrivals.ts";
import type { SweepContext } from "../context.ts";
import type { LinePlan, CellPlan } from "../plan.ts";
import type { LinePrompts, PromptBatch } from "./build-prompts.ts";
import type { MeasureOptions } from "../../engine/measure.ts";

/** A line's send: each prompt carries its first suffix ids, the next flush's probe should it finish last. */
export interface LineSend {
  options: Omit<SendOptions, "signal" | "startAtMs" | "ctx"> & { ctx: SweepContext };
}

/** The line's `prompts` (opened by the caller, who closes them) as the engine sends them. */
export function lineSend(plan: CellPlan, line: LinePlan, prompts: LinePrompts, ctx: SweepContext): LineSend {
  const { opts } = ctx;
  const rate = Number.isFinite(line.rate) ? `${line.rate} req/s` : "as slots free up";
  const source: RequestSource = {
    ready: (position) => prompts.ready(position),
    take: (position) => {
      const i = plan.indexAt(position);
      const { body, suffixHead } = prompts.body(position);
      const requestId = opts.requestDetails ? requestIdOf(ctx.runId, line.requestIdTag, i) : undefined;
      return { body, shape: { index: i, promptLen: plan.promptLen, maxNewTokens: opts.outputLen, requestId }, probeHead: suffixHead };
    },
    onArrival: (listener) => prompts.onArrival(listener),
    get failure() {
      return prompts.failure;
    },
    filled: () => prompts.filled(),
  };
  const arrivalsMs = Number.isFinite(line.rate)
    ? shareOfArrivals(
        arrivalOffsetsMs({ ratePerS: line.rate, burstiness: opts.burstiness, seed: opts.seed, count: line.count, durationS: opts.durationS }),
        plan.share,
      )
    : null;
  return {
    options: {
      ctx,
      source,
      count: line.sends,
      concurrency: line.inFlight,
      arrivalsMs,
      ratePerS: line.rate,
      name: `${plan.pct}%`,
      progress: {
        start: (total, label) => ctx.io.sink.progress(total, label),
        label: ctx.lineLabel ?? (opts.requestRates.length > 1 ? `${plan.pct}% @ ${rate}` : `${plan.pct}%`),
      },
    },
  };
}

/** Sends this process's share of the line (a shard worker's job); `startAtMs` (nowMs clock): the line's common start. */
export function sendShare(
  plan: CellPlan,
  line: LinePlan,
  prompts: LinePrompts,
  ctx: SweepContext,
  signal: AbortSignal,
  startAtMs?: number,
): Promise<SendResult> {
  return send({ ...lineSend(plan, line, prompts, ctx).options, signal, startAtMs });
}

/** The line's send as the engine measures it: in this process, or across the shards it coordinates. */
export function lineMeasureOptions(plan: CellPlan, line: LinePlan, send: LineSend, ctx: SweepContext): Omit<MeasureOptions, "ctx"> {
  const rate = Number.isFinite(line.rate) ? `${line.rate} req/s` : "as slots free up";
  const { ctx: _ctx, ...options } = send.options;
  return {
    ...options,
    shards: ctx.shards ? { group: ctx.shards, job: { pct: plan.pct, working_set: plan.workingSet, rate_index: line.rateIndex } } : null,
    announce: `Sending ${line.count} requests (${rate}, max_concurrency=${ctx.opts.maxConcurrency}) ...`,
  };
}

/** The first ids of the prompt this process saw finish last (the next flush's probe; the engine's lastFinished); null when none succeeded. */
export function lastFinishedProbeIds(batch: PromptBatch, lastFinished: SendResult["lastFinished"]): Uint32Array | null {
  // The coordinator's own prompts are the ones it can probe with: the last of its share to finish.
  return lastFinished === null ? null : batch.probeIds(lastFinished.index, lastFinished.probeHead);
}
