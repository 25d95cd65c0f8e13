/**
 * One point's requests - in this process, or across the shards it coordinates - one record per request, with the
 * server's cache counters around them: what summarize.ts makes a line of.
 */
import { log } from "../log.ts";
import type { Control } from "../backends/http.ts";
import { hitRateBetween, scrapeCacheCounters } from "../client/prometheus.ts";
import type { RequestRecord } from "../schema/record.ts";
import type { ShardsReport } from "../schema/nested.ts";
import type { ClientHealth } from "../metrics/self-check.ts";
import { sendAcrossShards, type ShardJob } from "./gather.ts";
import type { ShardGroup } from "../shard/group.ts";
import type { RequestContext } from "./request.ts";
import { send, sourceFilled, type SendOptions, type SendResult } from "./send.ts";

export interface Measurement {
  /** Every request that ran to an end (cancelled ones were never measured and are left out), by prompt index. */
  records: RequestRecord[];
  /** nowMs() when sending began: the schedule's origin. */
  t0Ms: number;
  /** From the start of sending to the last completion, seconds (the script's benchmark_duration). */
  durationS: number;
  startedAt: string;
  /** The run was interrupted during this point (or a shard failed: see shards.failed). */
  interrupted: boolean;
  /** The client's health; across shards, the worst of each figure. */
  health: ClientHealth;
  /** Hit rate from the server's Prometheus counters over the measured window; null without /metrics. */
  serverHitRate: number | null;
  /** How many shards ran and where; null in one process. */
  shards: ShardsReport | null;
}

export interface MeasureOptions extends Omit<SendOptions, "signal" | "startAtMs" | "ctx"> {
  /** The run's requests, control calls and interrupt (ctx.io.signal). */
  ctx: RequestContext & { ctl: Control };
  /** The shards this process coordinates and the job they run of this point; null or absent: this process alone. */
  shards?: { group: ShardGroup; job: ShardJob } | null;
  /** Logged once the look-ahead is full, just before sending ("Sending 100 requests ..."). */
  announce?: string;
}

/**
 * The measurement of some of a point's records (a replay's window of trace time): its clock from their intended
 * sends to their last event. The server's counters covered the whole point, so a part (`whole` false) has no hit rate.
 */
export function partOfMeasurement(m: Measurement, records: RequestRecord[], whole: boolean): Measurement {
  // Loops, not Math.min(...spread): a whole replay's records can be more than an engine takes as arguments.
  const t0Ms = records.reduce((low, r) => Math.min(low, r.intendedMs), Infinity);
  const endMs = records.reduce((high, r) => Math.max(high, r.lastEventMs > 0 ? r.lastEventMs : r.startMs + r.latencyMs), -Infinity);
  const firstStartMs = records.reduce((low, r) => Math.min(low, r.startMs), Infinity);
  return { ...m, records, t0Ms, durationS: Math.max(0, endMs - firstStartMs) / 1000, serverHitRate: whole ? m.serverHitRate : null };
}

/** Measures one point; `own` is this process's share (all of it without shards). */
export async function measure(o: MeasureOptions): Promise<Measurement & { own: SendResult }> {
  const { ctx } = o;
  const signal = ctx.io.signal;
  await sourceFilled(o.source, signal);
  // The watches' mark of the measurement's start (a scrape of every server): after the warm, before the clock.
  if (!signal?.aborted) await o.moments?.measuring?.();
  // Several replicas (a router): one server's /metrics would say one replica's hit rate; the ledger says them all.
  const scrape = ctx.router === undefined;
  const countersBefore = scrape ? await scrapeCacheCounters(ctx.ctl) : null;
  if (o.announce !== undefined) log.info(o.announce);
  const startedAt = new Date().toISOString();
  let shards: ShardsReport | null = null;
  let m: SendResult;
  let own: SendResult;
  if (o.shards) {
    const union = await sendAcrossShards(o.shards.group, o.shards.job, signal, (ownSignal, startAtMs) => send({ ...o, signal: ownSignal, startAtMs }));
    shards = union.report;
    m = union;
    own = union.own;
  } else {
    m = own = await send({ ...o, signal });
  }
  const countersAfter = m.interrupted || !scrape ? null : await scrapeCacheCounters(ctx.ctl);
  return {
    records: m.records,
    t0Ms: m.startMs,
    durationS: (m.endMs - m.startMs) / 1000,
    startedAt,
    interrupted: m.interrupted,
    health: m.health,
    serverHitRate: hitRateBetween(countersBefore, countersAfter),
    shards,
    own,
  };
}
