/**
 * A shard's side of the connection: connect to the coordinator (retrying while it starts up), say hello with the
 * run's token and rank, and get the setup back. Then messages flow both ways until the run ends.
 */
import type { Socket } from "bun";
import { hostname } from "node:os";
import { BenchError } from "../errors.ts";
import { Link, LINK_HANDLERS } from "./link.ts";
import type { ListenAddress } from "./coordinator-types.ts";
import { parseCoordinatorMessage, PROTOCOL_VERSION, type CoordinatorMessage, type ShardSetup } from "./messages.ts";

export interface ShardIdentity {
  rank: number;
  size: number;
  token: string;
}

/** A joined shard's connection. */
export interface ShardConnection {
  setup: ShardSetup;
  link: Link;
  /** Every message after the welcome, in order; the queue ends (null) when the connection closes. */
  next(): Promise<CoordinatorMessage | null>;
}

async function connectOnce(address: ListenAddress): Promise<Link> {
  const socket = {
    ...LINK_HANDLERS,
    open(s: Socket<Link>) {
      s.data = new Link(s as Socket<unknown>);
    },
  };
  const s =
    address.kind === "unix"
      ? await Bun.connect<Link>({ socket, unix: address.path })
      : await Bun.connect<Link>({ socket, hostname: address.hostname, port: address.port });
  s.data ??= new Link(s as Socket<unknown>);
  return s.data;
}

/** Where a shard runs: Slurm's node name when there is one (several nodes can share a hostname), else the hostname. */
export const shardHost = (): string => process.env.SLURMD_NODENAME || hostname();

const describe = (a: ListenAddress): string => (a.kind === "unix" ? a.path : `${a.hostname}:${a.port}`);

/** Connects (retrying until `deadlineMs` while nothing listens yet) and joins; throws BenchError when refused or unreachable. */
export async function joinCoordinator(
  address: ListenAddress,
  me: ShardIdentity & { readToken?: () => Promise<string> },
  deadlineMs: number,
): Promise<ShardConnection> {
  const until = performance.now() + deadlineMs;
  let link: Link | null = null;
  let lastError = "";
  while (link === null) {
    try {
      link = await connectOnce(address);
    } catch (err) {
      lastError = (err as Error).message;
      if (performance.now() > until) {
        throw new BenchError(`shard ${me.rank}: cannot reach the coordinator at ${describe(address)} within ${deadlineMs / 1000} s: ${lastError}`);
      }
      await Bun.sleep(100);
    }
  }
  const inbox: (CoordinatorMessage | null)[] = [];
  const waiters: ((m: CoordinatorMessage | null) => void)[] = [];
  const deliver = (m: CoordinatorMessage | null) => {
    const w = waiters.shift();
    if (w) w(m);
    else inbox.push(m);
  };
  link.events = {
    message: (raw) => {
      const m = parseCoordinatorMessage(raw);
      if (typeof m === "string") {
        link!.destroy();
        deliver(null);
      } else deliver(m);
    },
    protocolError: () => deliver(null),
    closed: () => deliver(null),
  };
  const next = (): Promise<CoordinatorMessage | null> => {
    if (inbox.length > 0) return Promise.resolve(inbox.shift()!);
    return new Promise((resolve) => waiters.push(resolve));
  };
  // A token published beside the socket is read once the coordinator answers: it writes the token before it listens,
  // so what a connected shard reads is this run's, never one an earlier step with the same ids left behind.
  const token = me.readToken ? await me.readToken() : me.token;
  link.send({ t: "hello", version: PROTOCOL_VERSION, token, rank: me.rank, size: me.size, pid: process.pid, host: shardHost() });
  const first = await next();
  if (first === null) throw new BenchError(`shard ${me.rank}: the coordinator at ${describe(address)} closed the connection`);
  if (first.t === "reject") throw new BenchError(`shard ${me.rank}: the coordinator refused it: ${first.reason}`);
  if (first.t !== "welcome") throw new BenchError(`shard ${me.rank}: expected a welcome from the coordinator, got ${first.t}`);
  return { setup: first.setup, link, next };
}
