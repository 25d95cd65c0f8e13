/**
 * A shard's life around whatever it measures, for any producer: join the coordinator, beat while alive, refuse to
 * run with other workload options than the coordinator's, and report a failure before going. Also the server
 * profile a shard takes from the coordinator's preflight (it never asks the server itself).
 */
import { BenchError, EXIT } from "../errors.ts";
import type { Backend, ServerProfile } from "../backends/types.ts";
import { backendFor, ENGINES, type EndpointChoice } from "../backends/index.ts";
import type { RunInfo } from "../schema/nested.ts";
import { VERSION } from "../version.ts";
import { NO_SERVER_INFO } from "../backends/server-info.ts";
import type { ListenAddress } from "./coordinator-types.ts";
import type { ShardSetup } from "./messages.ts";
import { joinCoordinator, type ShardConnection } from "./shard-client.ts";
import { readPublishedToken, securePrivateDir } from "./rendezvous.ts";
import { dirname } from "node:path";

/** How long a shard keeps trying to reach a coordinator that is still starting. */
const JOIN_DEADLINE_MS = 60_000;
/** A heartbeat tells the coordinator this shard is alive while it measures. */
const HEARTBEAT_MS = 1000;

export interface WorkerPlacement {
  rank: number;
  size: number;
  address: ListenAddress;
  token: string;
  /** Where rank 0 publishes the token (a one-node Slurm step without WARMBENCH_SHARD_TOKEN). */
  tokenFile?: string;
}

/** The token rank 0 published, from the private rendezvous directory (proven private first). */
async function joinToken(me: WorkerPlacement & { tokenFile?: string }): Promise<string> {
  if (me.address.kind === "unix") securePrivateDir(dirname(me.address.path));
  return readPublishedToken(me.tokenFile!, JOIN_DEADLINE_MS);
}

/** Joins, checks `optionsHash` against the coordinator's, and runs `serve` until it returns the exit code. */
export async function serveAsShard(me: WorkerPlacement, optionsHash: string, serve: (conn: ShardConnection) => Promise<number>): Promise<number> {
  const conn = await joinCoordinator(me.address, me.tokenFile === undefined ? me : { ...me, readToken: () => joinToken(me) }, JOIN_DEADLINE_MS);
  const beat = setInterval(() => conn.link.send({ t: "beat" }), HEARTBEAT_MS);
  try {
    if (conn.setup.options_hash !== optionsHash) {
      conn.link.send({ t: "failed", message: "it was started with other workload options than the coordinator" });
      throw new BenchError(`shard ${me.rank}: started with other workload options than the coordinator`, EXIT.usage);
    }
    return await serve(conn);
  } catch (err) {
    if (!(err instanceof BenchError)) conn.link.send({ t: "failed", message: (err as Error)?.message ?? String(err) });
    throw err;
  } finally {
    clearInterval(beat);
    conn.link.end();
  }
}

/** The server as the coordinator's preflight found it. */
export function profileFromSetup(setup: ShardSetup): ServerProfile {
  return {
    info: { ...NO_SERVER_INFO, version: setup.server_version },
    model: setup.model,
    pageSize: setup.page_size,
    pageSizeSource: "server",
    textMode: setup.text_mode,
    warnings: [],
  };
}

/** The backend the coordinator's preflight chose: a shard runs no preflight of its own. */
export function backendFromSetup(setup: ShardSetup, rank: number): Backend {
  if (!(setup.backend in ENGINES)) throw new BenchError(`shard ${rank}: the coordinator chose backend "${setup.backend}", which this shard does not know`);
  return backendFor(setup.backend as keyof typeof ENGINES, setup.endpoint as EndpointChoice);
}

/** A shard's run facts, as the coordinator's preflight found them (the coordinator writes the run's header). */
export function runInfoFromSetup(setup: ShardSetup, backend: Backend): RunInfo {
  return {
    warmbench_version: VERSION,
    started_at: "",
    options: {},
    served_model: setup.model,
    page_size: setup.page_size,
    page_size_source: "server",
    server_info_source: null,
    server_version: setup.server_version,
    server_info: null,
    engine: {
      name: backend.engine,
      source: "flag",
      evidence: "the coordinator's preflight",
      endpoint: backend.generatePath,
      prompt_encoding: backend.promptEncoding,
      cache_slots: null,
      max_running: null,
      flush_gap: null,
    },
  };
}
