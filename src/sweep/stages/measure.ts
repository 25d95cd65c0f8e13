/**
 * Stage: one line's requests - in this process, or across the shards it coordinates - one record per request, with
 * the server's cache counters around them.
 */
import { log } from "../../log.ts";
import { hitRateBetween, scrapeCacheCounters } from "../../client/prometheus.ts";
import type { RequestRecord } from "../../schema/record.ts";
import type { ClientHealth } from "../../metrics/self-check.ts";
import type { SweepContext } from "../context.ts";
import type { LinePlan, PctPlan } from "../plan.ts";
import { measureAcrossShards } from "../shards.ts";
import type { ShardsReport } from "../../schema/line-parts.ts";
import type { LinePrompts, PromptBatch } from "./build-prompts.ts";
import { measureShare, promptsFilled, type ShareMeasurement } from "./measure-share.ts";

export interface Measurement {
  /** Every request that ran to an end (cancelled ones were never measured and are left out), by prompt index. */
  records: RequestRecord[];
  /** nowMs() when sending began: the schedule's origin. */
  t0Ms: number;
  /** From the start of sending to the last completion, seconds (the script's benchmark_duration). */
  durationS: number;
  startedAt: string;
  /** The run was interrupted during this line (or a shard failed: see shards.failed). */
  interrupted: boolean;
  /** The client's health; across shards, the worst of each figure. */
  health: ClientHealth;
  /** Hit rate from the server's Prometheus counters over the measured window; null without /metrics. */
  serverHitRate: number | null;
  /** How many shards ran and where; null in one process. */
  shards: ShardsReport | null;
  /** The first ids of the prompt this process saw finish last (the next flush's probe); null when none succeeded. */
  lastFinishedProbeIds: Uint32Array | null;
}

/** Sends the line's `prompts` (opened by the caller, who closes them). */
export async function measure(plan: PctPlan, line: LinePlan, batch: PromptBatch, prompts: LinePrompts, ctx: SweepContext): Promise<Measurement> {
  const { opts, io } = ctx;
  await promptsFilled(prompts, io.signal);
  const countersBefore = await scrapeCacheCounters(ctx.ctl);
  const rate = Number.isFinite(line.rate) ? `${line.rate} req/s` : "as slots free up";
  log.info(`Sending ${line.count} requests (${rate}, max_concurrency=${opts.maxConcurrency}) ...`);
  const startedAt = new Date().toISOString();
  let shards: ShardsReport | null = null;
  let m: ShareMeasurement;
  if (ctx.shards) {
    const union = await measureAcrossShards(plan, line, prompts, ctx, ctx.shards);
    shards = union.report;
    m = union;
  } else {
    m = await measureShare(plan, line, prompts, ctx, io.signal);
  }
  const countersAfter = m.interrupted ? null : await scrapeCacheCounters(ctx.ctl);
  return {
    records: m.records,
    t0Ms: m.startMs,
    durationS: (m.endMs - m.startMs) / 1000,
    startedAt,
    interrupted: m.interrupted,
    health: m.health,
    serverHitRate: hitRateBetween(countersBefore, countersAfter),
    shards,
    lastFinishedProbeIds: m.lastFinished === null ? null : batch.probeIds(m.lastFinished.index, m.lastFinished.suffixHead),
  };
}
