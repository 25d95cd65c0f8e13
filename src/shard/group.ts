/**
 * A group of shards coordinated by this process (shard 0), for any producer: start the coordinator, and for
 * --workers the local worker processes (this program again, told its rank), then wait until every shard joined and
 * its clock offset is known. What the jobs are is the producer's business.
 */
import type { Subprocess } from "bun";
import { mkdtempSync, rmSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { BenchError } from "../errors.ts";
import { log } from "../log.ts";
import { selfArgs, selfCommand } from "../self-command.ts";
import { Coordinator } from "./coordinator.ts";
import { ShardFailure, type ListenAddress } from "./coordinator-types.ts";
import type { Backend, ServerProfile } from "../backends/types.ts";
import type { ShardSetup } from "./messages.ts";
import { bindAddress, newToken, TOKEN_ENV, WORKER_ENV, type Placement } from "./placement.ts";
import { publishToken, securePrivateDir } from "./rendezvous.ts";

/** A started group of shards, coordinated by this process. */
export interface ShardGroup {
  coordinator: Coordinator;
  size: number;
  launcher: "local" | "slurm" | "flag";
  /** Jobs released so far: the next line's job number. */
  jobs: number;
  close(): Promise<void>;
}

/** How long every shard has to connect, and how long one may fall silent before it counts as hung. */
const JOIN_TIMEOUT_MS = 60_000;
const SILENCE_TIMEOUT_MS = 15_000;

/**
 * What every shard needs of the coordinator's preflight (a shard runs none), and the proof that it runs the same
 * workload (`optionsHash`: the producer's hash of its shaping options).
 */
export function shardSetupOf(runId: string, optionsHash: string, server: ServerProfile, backend: Backend): ShardSetup {
  return {
    run_id: runId,
    options_hash: optionsHash,
    model: server.model,
    page_size: server.pageSize,
    text_mode: server.textMode,
    server_version: server.info.version,
    backend: backend.name,
    endpoint: backend.endpoint,
  };
}

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
      securePrivateDir(dirname(address.path));
      if (placement.tokenFile !== undefined) token = publishToken(placement.tokenFile, newToken());
      try {
        unlinkSync(address.path); // a socket left by an earlier step with the same ids
      } catch {
        // none
      }
      const path = address.path;
      const tokenFile = placement.tokenFile;
      cleanup = () => {
        for (const file of [path, tokenFile]) {
          if (file === undefined) continue;
          try {
            unlinkSync(file);
          } catch {
            // gone
          }
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
  for (const s of coordinator.shards)
    log.debug(`shard ${s.rank}: ${s.host} pid ${s.pid}, clock offset ${s.clockOffsetMs.toFixed(3)} ms (rtt ${s.clockRttMs.toFixed(3)} ms)`);
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
