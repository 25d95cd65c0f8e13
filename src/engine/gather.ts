/**
 * Gathering a point across shards (the coordinator's side, shard 0): release the point's job to every shard, wait
 * until each has filled its look-ahead, start them all on one schedule, send this process's share meanwhile, and
 * unite every shard's records onto this process's clock (src/shard/report.ts), so the metrics are computed on the
 * union exactly as in one process. A shard that fails stops the others and this process's share; what was measured
 * until then is kept, the point is marked interrupted and names the shard.
 */
import type { JobMessage } from "../shard/messages.ts";
import type { ShardGroup } from "../shard/group.ts";
import { uniteShards } from "../shard/report.ts";
import type { ShardsReport } from "../schema/nested.ts";
import type { SendResult } from "./send.ts";

/** How far ahead of now the shards are told to start a point: time for "go" to reach every one of them. */
const GO_LEAD_MS = 20;

/** What the shards are told to run: the job's fields but its number, which the group counts. */
export type ShardJob = Omit<JobMessage, "t" | "job">;

/** The union of every shard's records of a point, with this process's own share beside it. */
export interface GatheredSend extends SendResult {
  /** This process's share alone (the records it can probe with, its own start). */
  own: SendResult;
  report: ShardsReport;
  /** One line per shard that failed. */
  failed: string[];
}

/**
 * Releases `job` to every shard of `group`, sends this process's share with `sendOwn` (given the signal that also
 * stops when a shard fails, and the common start, nowMs clock) and gathers the union, records by index.
 */
export async function sendAcrossShards(
  group: ShardGroup,
  job: ShardJob,
  signal: AbortSignal | undefined,
  sendOwn: (signal: AbortSignal, startAtMs: number) => Promise<SendResult>,
): Promise<GatheredSend> {
  const n = group.jobs++;
  const stop = () => group.coordinator.stopAll();
  signal?.addEventListener("abort", stop, { once: true });
  const ownStop = new AbortController();
  const ownSignal = signal ? AbortSignal.any([signal, ownStop.signal]) : ownStop.signal;
  const released = group.coordinator.releaseJob({ t: "job", job: n, ...job }, () => {
    stop();
    ownStop.abort();
  });
  // Every shard draws its prompts and fills its look-ahead first; then all begin the point's one schedule together.
  await released.ready;
  const startAtMs = performance.now() + GO_LEAD_MS;
  released.start(performance.timeOrigin + startAtMs);
  const own = await sendOwn(ownSignal, startAtMs);
  const { results, failures } = await released.done;
  signal?.removeEventListener("abort", stop);
  const failed = failures.map((f) => f.message);
  const u = uniteShards(own, results, group, failed);
  u.records.sort((a, b) => a.index - b.index);
  return {
    records: u.records,
    // The coordinator probes with its own prompts: the last of its share to finish.
    lastFinished: own.lastFinished,
    startMs: own.startMs,
    endMs: u.endMs,
    interrupted: u.interrupted || failed.length > 0,
    health: u.health,
    own,
    report: u.report,
    failed,
  };
}
