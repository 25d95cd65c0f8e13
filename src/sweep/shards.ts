/**
 * The coordinator's side of a sharded sweep (shard 0): start the group (local workers, or wait for a launcher's
 * shards), then per pct release the job to every shard, measure its own share meanwhile, and gather every record
 * onto its own clock, so the metrics are computed on the union exactly as in one process.
 */
import type { RecordsMessage } from "../shard/messages.ts";
import type { ShardGroup } from "../shard/group.ts";
import { uniteShards } from "../shard/report.ts";
import type { ShardsReport } from "../schema/line-parts.ts";
import type { SweepContext } from "./context.ts";
import type { LinePlan, PctPlan } from "./plan.ts";
import type { LinePrompts } from "./stages/build-prompts.ts";
import { measureShare, type ShareMeasurement } from "./stages/measure-share.ts";

export { startShardGroup } from "../shard/group.ts";

/** How far ahead of now the shards are told to start a line: time for "go" to reach every one of them. */
const GO_LEAD_MS = 20;

/** The union of every shard's measurement of a pct, on this process's clock. */
export interface UnionMeasurement extends ShareMeasurement {
  report: ShardsReport;
}

/** Releases the line to every shard, measures this process's share meanwhile, and gathers the union. */
export async function measureAcrossShards(plan: PctPlan, line: LinePlan, prompts: LinePrompts, ctx: SweepContext, group: ShardGroup): Promise<UnionMeasurement> {
  const job = group.jobs++;
  const stop = () => group.coordinator.stopAll();
  ctx.io.signal?.addEventListener("abort", stop, { once: true });
  // A shard that fails stops this process's share and the other shards too: what they measured until then is kept
  // (the pct is marked interrupted and names the shard), and the run ends after this pct.
  const ownStop = new AbortController();
  const ownSignal = ctx.io.signal ? AbortSignal.any([ctx.io.signal, ownStop.signal]) : ownStop.signal;
  const released = group.coordinator.releaseJob({ t: "job", job, pct: plan.pct, working_set: plan.workingSet, rate_index: line.rateIndex }, () => {
    stop();
    ownStop.abort();
  });
  // Every shard draws its prompts and fills its look-ahead first; then all begin the line's one schedule together.
  await released.ready;
  const startAtMs = performance.now() + GO_LEAD_MS;
  released.start(performance.timeOrigin + startAtMs);
  const own = await measureShare(plan, line, prompts, ctx, ownSignal, startAtMs);
  const { results, failures } = await released.done;
  ctx.io.signal?.removeEventListener("abort", stop);
  return union(own, results, group, failures.map((f) => f.message));
}

function union(own: ShareMeasurement, theirs: Map<number, RecordsMessage>, group: ShardGroup, failed: string[]): UnionMeasurement {
  const u = uniteShards(own, theirs, group, failed);
  u.records.sort((a, b) => a.index - b.index);
  return {
    records: u.records,
    startMs: own.startMs,
    endMs: u.endMs,
    // The coordinator's own prompts are the ones it can probe with: the last of its share to finish.
    lastFinished: own.lastFinished,
    interrupted: u.interrupted || failed.length > 0,
    health: u.health,
    report: u.report,
  };
}
