/** The coordinator's public shapes: where it listens, what it is told, what a joined shard and a job's outcome are. */
import type { RecordsMessage, ShardSetup } from "./messages.ts";

/** Where the coordinator listens. */
export type ListenAddress = { kind: "unix"; path: string } | { kind: "tcp"; hostname: string; port: number };

export interface CoordinatorOptions {
  listen: ListenAddress;
  token: string;
  /** Shards in the run, the coordinator (rank 0) included. */
  size: number;
  setup: ShardSetup;
  /** Every shard must have joined within this, ms. */
  joinTimeoutMs: number;
  /** A shard that sends nothing (not even its heartbeat) for this long is taken as hung, ms. */
  silenceTimeoutMs: number;
  /** Where refusals and other notes go. */
  note: (message: string) => void;
}

/** A shard that joined. */
export interface ShardPeer {
  rank: number;
  host: string;
  pid: number;
  /** The shard's clock minus the coordinator's (epoch ms), from the ping with the shortest round trip. */
  clockOffsetMs: number;
  /** That round trip, ms: the offset's uncertainty is half of it. */
  clockRttMs: number;
}

/** A job released to the shards (see releaseJob). */
export interface ReleasedJob {
  ready: Promise<void>;
  start(startEpochMs: number): void;
  done: Promise<JobResults>;
}

/** A job's outcome: the records of every shard that answered, and the failure of every one that did not. */
export interface JobResults {
  results: Map<number, RecordsMessage>;
  failures: ShardFailure[];
}

/** Why a job could not be gathered, naming the shard. */
export class ShardFailure extends Error {
  override name = "ShardFailure";
  constructor(
    readonly rank: number,
    message: string,
  ) {
    super(message);
  }
}
