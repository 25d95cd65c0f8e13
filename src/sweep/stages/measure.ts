/**
 * Stage: stream every prompt of the pct under the concurrency limit and keep one record per request - in this
 * process, or across the shards it coordinates - with the server's cache counters around it.
 */
import { log } from "../../log.ts";
import { hitRateBetween, scrapeCacheCounters } from "../../client/prometheus.ts";
import type { RequestRecord } from "../../metrics/record.ts";
import type { ClientHealth } from "../../metrics/self-check.ts";
import type { SweepContext } from "../context.ts";
import type { PctPlan } from "../plan.ts";
import { measureAcrossShards, type ShardsReport } from "../shards.ts";
import type { PromptBatch } from "./build-prompts.ts";
import { measureShare, type ShareMeasurement } from "./measure-share.ts";

export interface Measurement {
  /** Every request that ran to an end (cancelled ones were never measured and are left out), by prompt index. */
  records: RequestRecord[];
  /** From the first send to the last completion, seconds (the script's benchmark_duration). */
  durationS: number;
  startedAt: string;
  /** The run was interrupted during this pct (or a shard failed: see shards.failed). */
  interrupted: boolean;
  /** The client's health; across shards, the worst of each figure. */
  health: ClientHealth;
  /** Hit rate from the server's Prometheus counters over the measured window; null without /metrics. */
  serverHitRate: number | null;
  /** How many shards ran and where; null in one process. */
  shards: ShardsReport | null;
}

export async function measure(plan: PctPlan, batch: PromptBatch, ctx: SweepContext): Promise<Measurement> {
  const countersBefore = await scrapeCacheCounters(ctx.ctl);
  log.info(`Sending requests (max_concurrency=${ctx.opts.maxConcurrency}) ...`);
  const startedAt = new Date().toISOString();
  let shards: ShardsReport | null = null;
  let m: ShareMeasurement;
  if (ctx.shards) {
    const union = await measureAcrossShards(plan, batch, ctx, ctx.shards);
    shards = union.report;
    m = union;
  } else {
    m = await measureShare(plan, batch, ctx, ctx.io.signal);
  }
  const countersAfter = m.interrupted ? null : await scrapeCacheCounters(ctx.ctl);
  return {
    records: m.records,
    durationS: (m.endMs - m.startMs) / 1000,
    startedAt,
    interrupted: m.interrupted,
    health: m.health,
    serverHitRate: hitRateBetween(countersBefore, countersAfter),
    shards,
  };
}
