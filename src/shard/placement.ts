/**
 * Where this process stands in a run: alone, the coordinator of local worker processes (--workers), or one shard
 * of a run started by a launcher (--shard: Slurm's srun, a Kubernetes Indexed Job, any other), and how the shards
 * find the coordinator. Decided once, before anything is sent; every problem is a one-line UsageError.
 */
import { randomBytes } from "node:crypto";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { UsageError } from "../errors.ts";
import type { ListenAddress } from "./coordinator-types.ts";
import { expandHostlist } from "./hostlist.ts";

/** The secret every shard of a launcher-started run must present (srun propagates the environment). */
export const TOKEN_ENV = "WARMBENCH_SHARD_TOKEN";
/** Set by a coordinator for the local workers it starts. */
export const WORKER_ENV = { rank: "WARMBENCH_SHARD_RANK", size: "WARMBENCH_SHARD_SIZE", socket: "WARMBENCH_SHARD_SOCKET" } as const;

/** How this process takes part in the run. */
export type Placement =
  | { kind: "single" }
  /** The coordinator of `size` processes on this machine: it starts size-1 workers itself; `cappedFrom`: what was asked, where more than this machine holds. */
  | { kind: "local"; size: number; cappedFrom?: number }
  /** One shard of a run whose processes were started by a launcher; rank 0 coordinates. */
  | {
      kind: "shard";
      rank: number;
      size: number;
      launcher: "slurm" | "flag";
      address: ListenAddress;
      token: string;
      nodes: string[];
      /** A one-node Slurm step without WARMBENCH_SHARD_TOKEN: rank 0 writes a random token here, the others read it (rendezvous.ts). */
      tokenFile?: string;
    }
  /** A local worker started by a coordinator of this machine. */
  | { kind: "worker"; rank: number; size: number; address: ListenAddress; token: string };

/** `--workers`: a count, or "auto". */
export function parseWorkersFlag(value: string): number | "auto" {
  if (value.trim() === "auto") return "auto";
  const n = Number(value.trim());
  if (!Number.isInteger(n) || n < 1 || n > 1024) throw new UsageError(`--workers: expected a process count from 1 to 1024 or "auto", got "${value}"`);
  return n;
}

/** `--shard`: "I/N" (0 <= I < N), or "auto". */
export function parseShardFlag(value: string): { rank: number; size: number } | "auto" {
  if (value.trim() === "auto") return "auto";
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(value);
  const rank = m ? Number(m[1]) : NaN;
  const size = m ? Number(m[2]) : NaN;
  if (!m || size < 1 || rank >= size) throw new UsageError(`--shard: expected I/N with 0 <= I < N (e.g. 0/4), or "auto", got "${value}"`);
  return { rank, size };
}

/** `--coordinator HOST:PORT` ([v6]:port too). */
export function parseCoordinatorFlag(value: string): { hostname: string; port: number } {
  const m = /^\s*(\[[^\]]+\]|[^:\s]+):(\d+)\s*$/.exec(value);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port < 1 || port > 65535) throw new UsageError(`--coordinator: expected HOST:PORT, got "${value}"`);
  return { hostname: m[1]!.replace(/^\[|\]$/g, ""), port };
}

/** A fresh per-run secret for local workers. */
export const newToken = (): string => randomBytes(24).toString("hex");

/** Streams one worker process takes before another one pays off (see bench/, "worker scaling"). */
export const STREAMS_PER_WORKER = 256;

/** `--workers auto`: enough processes that none carries more than STREAMS_PER_WORKER streams, within cores-1. */
export function autoWorkers(inFlight: number, cores: number): number {
  return Math.max(1, Math.min(Math.max(1, cores - 1), Math.ceil(inFlight / STREAMS_PER_WORKER)));
}

export interface PlacementFlags {
  workers: number | "auto" | null;
  shard: { rank: number; size: number } | "auto" | null;
  coordinator: { hostname: string; port: number } | null;
  inFlight: number;
}

/** Port of a Slurm step's coordinator: the same on every task of the step, different between steps. */
export function slurmPort(jobId: number, stepId: number): number {
  return 20_000 + ((jobId * 64 + stepId) % 40_000);
}

/** Processes beyond this many a core only queue for it (and each is a runtime in memory): --workers is capped there. */
export const WORKERS_PER_CORE = 4;

/**
 * Decides the placement from the flags and the environment. Local workers are capped by the cores (WORKERS_PER_CORE
 * each) and by `memoryWorkers`, the most the memory holds (config/memory-model.ts): 0.4 started 63 copies on 2 cores.
 */
export function resolvePlacement(f: PlacementFlags, env: Record<string, string | undefined>, cores: number, memoryWorkers = Infinity): Placement {
  const workerRank = env[WORKER_ENV.rank];
  if (workerRank !== undefined) {
    const token = env[TOKEN_ENV];
    const path = env[WORKER_ENV.socket];
    if (!token || !path)
      throw new UsageError(`${WORKER_ENV.rank} is set without ${TOKEN_ENV} and ${WORKER_ENV.socket}: not started by a warmbench coordinator`);
    return { kind: "worker", rank: Number(workerRank), size: Number(env[WORKER_ENV.size]), address: { kind: "unix", path }, token };
  }
  if (f.workers !== null && f.shard !== null) throw new UsageError("--workers and --shard exclude each other: --workers starts the shards itself");
  if (f.workers !== null) {
    const asked = f.workers === "auto" ? autoWorkers(f.inFlight, cores) : f.workers;
    const size = Math.max(1, Math.min(asked, WORKERS_PER_CORE * cores, memoryWorkers));
    if (size <= 1) return { kind: "single" };
    return size < asked ? { kind: "local", size, cappedFrom: asked } : { kind: "local", size };
  }
  if (f.shard === null) {
    if (f.coordinator !== null) throw new UsageError("--coordinator needs --shard");
    return { kind: "single" };
  }
  return f.shard === "auto" ? slurmPlacement(f, env) : flagPlacement(f.shard, f, env);
}

function slurmPlacement(f: PlacementFlags, env: Record<string, string | undefined>): Placement {
  const procId = env.SLURM_PROCID;
  const nTasks = env.SLURM_NTASKS;
  // An sbatch script's own shell has SLURM_PROCID=0 and SLURM_NTASKS but no step: it must not think it is rank 0.
  if (procId === undefined || nTasks === undefined || env.SLURM_STEP_ID === undefined) {
    const hint =
      env.JOB_COMPLETION_INDEX !== undefined ? ` (a Kubernetes Indexed Job: use --shard $JOB_COMPLETION_INDEX/<completions> --coordinator HOST:PORT)` : "";
    throw new UsageError(
      `--shard auto: not inside a Slurm step (SLURM_PROCID / SLURM_NTASKS / SLURM_STEP_ID are not all set; start it with srun)${hint}; use --shard I/N otherwise`,
    );
  }
  const rank = Number(procId);
  const size = Number(nTasks);
  if (!Number.isInteger(rank) || !Number.isInteger(size) || size < 1 || rank < 0 || rank >= size) {
    throw new UsageError(`--shard auto: SLURM_PROCID=${procId} / SLURM_NTASKS=${nTasks} are not a rank and a task count`);
  }
  const nodeList = env.SLURM_STEP_NODELIST ?? env.SLURM_JOB_NODELIST ?? "";
  let nodes: string[];
  try {
    nodes = expandHostlist(nodeList);
  } catch (err) {
    throw new UsageError(`--shard auto: SLURM_STEP_NODELIST: ${(err as Error).message}`);
  }
  const jobId = Number(env.SLURM_JOB_ID ?? 0);
  const stepId = Number(env.SLURM_STEP_ID ?? 0);
  const token = env[TOKEN_ENV];
  if (f.coordinator === null && nodes.length <= 1) {
    // One node: a unix socket in a directory only this user can enter (rendezvous.ts proves it is), and a random token
    // rank 0 writes there for the others, unless the user gave one.
    const dir = join(tmpdir(), `warmbench-${userInfo().uid}`);
    const path = join(dir, `slurm-${jobId}.${stepId}.sock`);
    const tokenFile = token ? {} : { tokenFile: join(dir, `slurm-${jobId}.${stepId}.token`) };
    return { kind: "shard", rank, size, launcher: "slurm", address: { kind: "unix", path }, token: token ?? "", nodes, ...tokenFile };
  }
  if (!token) {
    throw new UsageError(
      `--shard auto: this Slurm step spans ${nodes.length} nodes, so the coordinator listens on TCP: set ${TOKEN_ENV} to a secret ` +
        `before srun (e.g. export ${TOKEN_ENV}=$(openssl rand -hex 24)); srun passes it to every task`,
    );
  }
  const address = f.coordinator ?? { hostname: nodes[0] ?? env.SLURM_LAUNCH_NODE_IPADDR ?? "127.0.0.1", port: slurmPort(jobId, stepId) };
  return { kind: "shard", rank, size, launcher: "slurm", address: { kind: "tcp", ...address }, token, nodes };
}

function flagPlacement(shard: { rank: number; size: number }, f: PlacementFlags, env: Record<string, string | undefined>): Placement {
  if (shard.size === 1) return { kind: "single" };
  if (f.coordinator === null) throw new UsageError(`--shard ${shard.rank}/${shard.size}: every shard needs --coordinator HOST:PORT (shard 0 listens there)`);
  const token = env[TOKEN_ENV];
  if (!token) throw new UsageError(`--shard ${shard.rank}/${shard.size}: set ${TOKEN_ENV} to the same secret for every shard`);
  return { kind: "shard", ...shard, launcher: "flag", address: { kind: "tcp", ...f.coordinator }, token, nodes: [] };
}

/** Where a coordinator at `address` binds: itself for a unix path or a loopback host, else every interface. */
export function bindAddress(address: ListenAddress): ListenAddress {
  if (address.kind === "unix") return address;
  const loopback = address.hostname === "localhost" || address.hostname.startsWith("127.") || address.hostname === "::1";
  return { kind: "tcp", hostname: loopback ? address.hostname : "0.0.0.0", port: address.port };
}
