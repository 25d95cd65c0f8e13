/**
 * Stage: stream every prompt under the concurrency limit and keep one record per request; around it, the client's
 * self-check and the server's cache counters. Nothing but recording happens on the clock.
 */
import { log } from "../../log.ts";
import { runPool } from "../../client/pool.ts";
import { nowMs } from "../../client/clock.ts";
import { hitRateBetween, scrapeCacheCounters } from "../../client/prometheus.ts";
import { resolveGeneratedText, streamRequest } from "../../client/stream.ts";
import type { RequestRecord } from "../../metrics/record.ts";
import { startClientMonitor, type ClientHealth } from "../../metrics/self-check.ts";
import { requestIdOf } from "../../report/details.ts";
import { startProgress } from "../../report/progress.ts";
import type { SweepContext } from "../context.ts";
import type { PctPlan } from "../plan.ts";
import { streamRequestFor } from "../request.ts";
import type { PromptBatch } from "./build-prompts.ts";

export interface Measurement {
  /** Every request that ran to an end (cancelled ones were never measured and are left out). */
  records: RequestRecord[];
  /** From the first send to the last completion, seconds (the script's benchmark_duration). */
  durationS: number;
  startedAt: string;
  /** The run was interrupted during this pct. */
  interrupted: boolean;
  health: ClientHealth;
  /** Hit rate from the server's Prometheus counters over the measured window; null without /metrics. */
  serverHitRate: number | null;
}

export async function measure(plan: PctPlan, batch: PromptBatch, ctx: SweepContext): Promise<Measurement> {
  const { opts, io } = ctx;
  const countersBefore = await scrapeCacheCounters(ctx.ctl);
  log.info(`Sending requests (max_concurrency=${opts.maxConcurrency}) ...`);
  const startedAt = new Date().toISOString();
  const monitor = startClientMonitor();
  const progress = startProgress(plan.numPrompts, `${plan.pct}%`, { quiet: opts.quiet });
  const t0 = nowMs();
  const settled = await runPool(
    plan.numPrompts,
    plan.inFlight,
    (i) =>
      streamRequest(
        streamRequestFor(ctx, batch.body(i), {
          index: i,
          promptLen: plan.promptLen,
          maxNewTokens: opts.outputLen,
          requestId: opts.requestDetails ? requestIdOf(ctx.runId, plan.pct, i) : undefined,
        }),
      ),
    { signal: io.signal, onSettled: (_i, r) => progress.settled(r.ok, r.outputLen) },
  );
  const durationS = (nowMs() - t0) / 1000;
  progress.stop();
  const health = monitor.stop();
  const interrupted = io.signal?.aborted === true;
  const countersAfter = interrupted ? null : await scrapeCacheCounters(ctx.ctl);
  const records = settled.filter((r): r is RequestRecord => r !== undefined && r.failureKind !== "cancelled");
  // Text is parsed only now: doing it as each stream ended would hold up the other streams' events.
  for (const r of records) resolveGeneratedText(r, ctx.backend);
  return { records, durationS, startedAt, interrupted, health, serverHitRate: hitRateBetween(countersBefore, countersAfter) };
}
