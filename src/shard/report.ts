/**
 * What a line says about the shards that measured it (its `shards` key), and the union of their records onto the
 * coordinator's clock, for any producer: the metrics are then computed on the union exactly as in one process.
 */
import type { RequestRecord } from "../schema/record.ts";
import type { ShardRow, ShardsReport } from "../schema/nested.ts";
import { isSaturated, type ClientHealth } from "../metrics/self-check.ts";
import type { ShardGroup } from "./group.ts";
import { fromWireRecord, type RecordsMessage } from "./messages.ts";
import { shardHost } from "./shard-client.ts";

/** Every shard's records of one job on this process's clock, with the `shards` report and the worst health. */
export interface ShardUnion {
  records: RequestRecord[];
  /** The last shard's end, ms on this process's clock. */
  endMs: number;
  /** Some shard was stopped while it measured. */
  interrupted: boolean;
  health: ClientHealth;
  report: ShardsReport;
}

/** Unites this process's share (rank 0) with what each other shard answered for the job; `failed` names the shards that did not. */
export function uniteShards(
  own: { records: readonly RequestRecord[]; endMs: number; interrupted: boolean; health: ClientHealth },
  theirs: Map<number, RecordsMessage>,
  group: ShardGroup,
  failed: string[],
): ShardUnion {
  const timeOrigin = performance.timeOrigin;
  const records: RequestRecord[] = [...own.records];
  let endMs = own.endMs;
  let interrupted = own.interrupted;
  const healths: ClientHealth[] = [own.health];
  const ranks: ShardRow[] = [shardRow(0, shardHost(), process.pid, own.records, 0, 0, own.health)];
  for (const peer of group.coordinator.shards) {
    const m = theirs.get(peer.rank);
    if (!m) continue;
    const mine = m.records.map((w) => fromWireRecord(w, timeOrigin, peer.clockOffsetMs));
    records.push(...mine);
    endMs = Math.max(endMs, m.endEpochMs - peer.clockOffsetMs - timeOrigin);
    interrupted ||= m.interrupted;
    healths.push(m.health);
    ranks.push(shardRow(peer.rank, peer.host, peer.pid, mine, peer.clockOffsetMs, peer.clockRttMs, m.health));
  }
  return { records, endMs, interrupted, health: worstHealth(healths), report: { count: group.size, launcher: group.launcher, ranks, failed } };
}

function shardRow(rank: number, host: string, pid: number, records: readonly RequestRecord[], offsetMs: number, rttMs: number, h: ClientHealth): ShardRow {
  return {
    rank,
    host,
    pid,
    sent: records.length,
    failed: records.filter((r) => !r.ok).length,
    clock_offset_ms: offsetMs,
    clock_rtt_ms: rttMs,
    loop_lag_p99_ms: h.loopLagP99Ms,
    own_lag_p99_ms: h.ownLagP99Ms,
    js_cpu_pct: h.jsCpuPct,
    saturated: isSaturated(h),
  };
}

/** The run is as healthy as its least healthy shard. */
function worstHealth(hs: ClientHealth[]): ClientHealth {
  const max = (f: (h: ClientHealth) => number) => Math.max(...hs.map(f));
  const http = hs.map((h) => h.httpCpuPct).filter((v): v is number => v !== null);
  return {
    loopLagP99Ms: max((h) => h.loopLagP99Ms),
    loopLagMaxMs: max((h) => h.loopLagMaxMs),
    ownLagP99Ms: max((h) => h.ownLagP99Ms),
    jsCpuPct: max((h) => h.jsCpuPct),
    httpCpuPct: http.length > 0 ? Math.max(...http) : null,
    processCpuPct: max((h) => h.processCpuPct),
  };
}
