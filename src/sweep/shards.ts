/**
 * The coordinator's side of a sharded sweep (shard 0): start the group (local workers, or wait for a launcher's
 * shards), then per pct release the job to every shard, measure its own share meanwhile, and gather every record
 * onto its own clock, so the metrics are computed on the union exactly as in one process.
 */
import type { Subprocess } from "bun";
import { mkdirSync, mkdtempSync, rmSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { BenchError } from "../errors.ts";
import { log } from "../log.ts";
import type { RequestRecord } from "../schema/record.ts";
import type { ClientHealth } from "../metrics/self-check.ts";
import { isSaturated } from "../metrics/self-check.ts";
import { selfArgs, selfCommand } from "../self-command.ts";
import { Coordinator, ShardFailure, type ListenAddress } from "../shard/coordinator.ts";
import { fromWireRecord, type RecordsMessage, type ShardSetup } from "../shard/messages.ts";
import { shardHost } from "../shard/shard-client.ts";
import { bindAddress, newToken, TOKEN_ENV, WORKER_ENV, type Placement } from "../shard/placement.ts";
import type { ShardGroup, SweepContext } from "./context.ts";
import type { ShardRow, ShardsReport } from "../schema/line-parts.ts";
import type { LinePlan, PctPlan } from "./plan.ts";
import type { LinePrompts } from "./stages/build-prompts.ts";
import { measureShare, type ShareMeasurement } from "./stages/measure-share.ts";

/** How far ahead of now the shards are told to start a line: time for "go" to reach every one of them. */
const GO_LEAD_MS = 20;

/** How long every shard has to connect, and how long one may fall silent before it counts as hung. */
const JOIN_TIMEOUT_MS = 60_000;
const SILENCE_TIMEOUT_MS = 15_000;

/** Starts the coordinator for `placement` (rank 0) and, for local runs, the worker processes; resolves once all joined. */
export async function startShardGroup(placement: Placement, setup: ShardSetup, signal?: AbortSignal): Promise<ShardGroup | null> {
  if (placement.kind === "single" || placement.kind === "worker") return null;
  if (placement.kind === "shard" && placement.rank !== 0) return null;
  let address: ListenAddress;
  let token: string;
  let cleanup = (): void => {};
  const workers: Subprocess[] = [];
  if (placement.kind === "local") {
    const dir = mkdtempSync(join(tmpdir(), "warmbench-workers-"));
    address = { kind: "unix", path: join(dir, "coordinator.sock") };
    token = newToken();
    cleanup = () => rmSync(dir, { recursive: true, force: true });
  } else {
    address = placement.address;
    token = placement.token;
    if (address.kind === "unix") {
      mkdirSync(dirname(address.path), { recursive: true, mode: 0o700 });
      try {
        unlinkSync(address.path); // a socket left by an earlier step with the same ids
      } catch {
        // none
      }
      const path = address.path;
      cleanup = () => {
        try {
          unlinkSync(path);
        } catch {
          // gone
        }
      };
    }
  }
  const coordinator = Coordinator.start({
    listen: bindAddress(address),
    token,
    size: placement.size,
    setup,
    joinTimeoutMs: JOIN_TIMEOUT_MS,
    silenceTimeoutMs: SILENCE_TIMEOUT_MS,
    note: (m) => log.warn(m),
  });
  if (placement.kind === "local" && address.kind === "unix") {
    for (let rank = 1; rank < placement.size; rank++) workers.push(spawnWorker(rank, placement.size, address.path, token));
  }
  const group: ShardGroup = {
    coordinator,
    size: placement.size,
    launcher: placement.kind === "local" ? "local" : placement.launcher,
    jobs: 0,
    close: async () => {
      coordinator.close();
      await Promise.all(workers.map((w) => Promise.race([w.exited, Bun.sleep(5000).then(() => w.kill("SIGKILL"))])));
      cleanup();
    },
  };
  try {
    log.info(`waiting for ${placement.size - 1} shard(s) to join ...`);
    await coordinator.waitForShards(signal);
    await coordinator.measureClocks();
  } catch (err) {
    await group.close();
    if (err instanceof ShardFailure) throw new BenchError(err.message, signal?.aborted ? 130 : 1);
    throw err;
  }
  for (const s of coordinator.shards) log.debug(`shard ${s.rank}: ${s.host} pid ${s.pid}, clock offset ${s.clockOffsetMs.toFixed(3)} ms (rtt ${s.clockRttMs.toFixed(3)} ms)`);
  return group;
}

/** A local worker: this program again, told its rank and the coordinator's socket; its stdin is its lifeline. */
function spawnWorker(rank: number, size: number, socketPath: string, token: string): Subprocess {
  return Bun.spawn([...selfCommand(), ...selfArgs()], {
    stdin: "pipe",
    stdout: "ignore",
    stderr: "inherit",
    env: {
      ...process.env,
      [WORKER_ENV.rank]: String(rank),
      [WORKER_ENV.size]: String(size),
      [WORKER_ENV.socket]: socketPath,
      [TOKEN_ENV]: token,
      // A worker's own share never needs a relaunch for Bun's per-origin fetch cap.
      BUN_CONFIG_MAX_HTTP_REQUESTS: "65535",
      WARMBENCH_RELAUNCHED: "1",
    },
  });
}

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
  records.sort((a, b) => a.index - b.index);
  return {
    records,
    startMs: own.startMs,
    endMs,
    // The coordinator's own prompts are the ones it can probe with: the last of its share to finish.
    lastFinished: own.lastFinished,
    interrupted: interrupted || failed.length > 0,
    health: worstHealth(healths),
    report: { count: group.size, launcher: group.launcher, ranks, failed },
  };
}

function shardRow(rank: number, host: string, pid: number, records: RequestRecord[], offsetMs: number, rttMs: number, h: ClientHealth): ShardRow {
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
