/**
 * The coordinator's side of the shard protocol (shard 0): it listens only while the run needs it, admits exactly
 * the expected shards (the run's token, a rank in range, each rank once), measures each shard's clock offset,
 * releases a job to all of them and gathers their records. A shard that disconnects, falls silent or reports a
 * failure fails the job with a message naming it; a stranger's connection is refused and logged, and changes nothing.
 */
import type { Socket, TCPSocketListener, UnixSocketListener } from "bun";
import { timingSafeEqual } from "node:crypto";
import { Link, LINK_HANDLERS } from "./link.ts";
import { parseShardMessage, PROTOCOL_VERSION, type JobMessage, type RecordsMessage } from "./messages.ts";
import { ShardFailure, type CoordinatorOptions, type JobResults, type ReleasedJob, type ShardPeer } from "./coordinator-types.ts";

interface PeerState extends ShardPeer {
  link: Link;
  lastHeardMs: number;
  /** Waiters on this shard's records and readiness, per job: several jobs may be in flight (multi-turn rounds). */
  onRecords: Map<number, (m: RecordsMessage) => void>;
  onReady: Map<number, () => void>;
  /** Records of a job not released yet (a shard that ended early answers every round it will never run). */
  early: Map<number, RecordsMessage>;
  onPong: ((id: number, shardEpochMs: number) => void) | null;
  /** Set once the shard is gone or failed; every waiter is told. */
  failure: string | null;
  onFailure: ((why: string) => void)[];
}

const tokensEqual = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

export class Coordinator {
  private readonly peers = new Map<number, PeerState>();
  private joinedWaiter: (() => void) | null = null;
  private listener: TCPSocketListener<Link> | UnixSocketListener<Link> | null = null;
  private watchdog: ReturnType<typeof setInterval> | null = null;

  private constructor(private readonly o: CoordinatorOptions) {}

  /** Starts listening; shards may connect from now on. */
  static start(o: CoordinatorOptions): Coordinator {
    const c = new Coordinator(o);
    const socket = {
      ...LINK_HANDLERS,
      open(s: Socket<Link>) {
        s.data = new Link(s as Socket<unknown>);
        c.accept(s.data);
      },
    };
    c.listener =
      o.listen.kind === "unix"
        ? Bun.listen<Link>({ unix: o.listen.path, socket })
        : Bun.listen<Link>({ hostname: o.listen.hostname, port: o.listen.port, socket });
    c.watchdog = setInterval(() => c.checkSilence(), Math.min(1000, o.silenceTimeoutMs / 4));
    c.watchdog.unref();
    return c;
  }

  /** The TCP port actually listened on (port 0 picks one). */
  get port(): number {
    return (this.listener as TCPSocketListener<Link> | null)?.port ?? 0;
  }

  /** The shards that joined, by rank. */
  get shards(): ShardPeer[] {
    return [...this.peers.values()]
      .sort((a, b) => a.rank - b.rank)
      .map(({ rank, host, pid, clockOffsetMs, clockRttMs }) => ({ rank, host, pid, clockOffsetMs, clockRttMs }));
  }

  /** Resolves once every rank 1..size-1 joined; rejects after joinTimeoutMs naming the ranks still missing. */
  async waitForShards(signal?: AbortSignal): Promise<void> {
    if (this.peers.size === this.o.size - 1) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        const missing = [];
        for (let r = 1; r < this.o.size; r++) if (!this.peers.has(r)) missing.push(r);
        reject(new ShardFailure(missing[0] ?? 0, `shard(s) ${missing.join(", ")} of ${this.o.size} did not connect within ${this.o.joinTimeoutMs / 1000} s`));
      }, this.o.joinTimeoutMs);
      signal?.addEventListener(
        "abort",
        () => {
          clearTimeout(timer);
          reject(new ShardFailure(0, "interrupted while waiting for the shards"));
        },
        { once: true },
      );
      this.joinedWaiter = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Pings every shard a few times and keeps, per shard, the offset of the fastest round trip. */
  async measureClocks(rounds = 8): Promise<void> {
    let id = 0;
    for (const peer of this.peers.values()) {
      let best = Infinity;
      for (let i = 0; i < rounds; i++) {
        const sentEpochMs = performance.timeOrigin + performance.now();
        const pingId = ++id;
        const shardEpochMs = await this.await<number>(peer, (done) => {
          peer.onPong = (pid, shardMs) => {
            if (pid === pingId) done(shardMs);
          };
          peer.link.send({ t: "ping", id: pingId });
        });
        const backEpochMs = performance.timeOrigin + performance.now();
        const rtt = backEpochMs - sentEpochMs;
        if (rtt < best) {
          best = rtt;
          peer.clockRttMs = rtt;
          peer.clockOffsetMs = shardEpochMs - (sentEpochMs + backEpochMs) / 2;
        }
      }
      peer.onPong = null;
    }
  }

  /**
   * Releases a job to every shard. Each prepares it (draws its prompts, fills its look-ahead) and says ready;
   * `ready` resolves once every shard did (or failed, or already answered with its records); `start` then tells every
   * shard when to begin, on its own clock, so that all of them follow one schedule from one origin; `done` gathers
   * their records.
   */
  releaseJob(job: JobMessage, onFailure: (f: ShardFailure) => void = () => {}): ReleasedJob {
    const results = new Map<number, RecordsMessage>();
    const failures: ShardFailure[] = [];
    const readies: Promise<void>[] = [];
    const peers = [...this.peers.values()];
    const done = Promise.all(
      peers.map(async (peer) => {
        let readyNow: () => void = () => {};
        readies.push(new Promise<void>((resolve) => (readyNow = resolve)));
        try {
          const records = await this.await<RecordsMessage>(peer, (finish) => {
            peer.onReady.set(job.job, readyNow);
            const onRecords = (m: RecordsMessage) => {
              readyNow();
              finish(m);
            };
            const early = peer.early.get(job.job);
            peer.early.delete(job.job);
            peer.onRecords.set(job.job, onRecords);
            peer.link.send(job);
            if (early !== undefined) onRecords(early);
          });
          results.set(peer.rank, records);
        } catch (err) {
          const failure = err instanceof ShardFailure ? err : new ShardFailure(peer.rank, String(err));
          failures.push(failure);
          onFailure(failure);
        } finally {
          readyNow();
          peer.onRecords.delete(job.job);
          peer.onReady.delete(job.job);
        }
      }),
    ).then(() => ({ results, failures }));
    return {
      ready: Promise.all(readies).then(() => {}),
      start: (startEpochMs) => {
        for (const peer of peers) {
          if (peer.failure === null) peer.link.send({ t: "go", job: job.job, start_epoch_ms: startEpochMs + peer.clockOffsetMs });
        }
      },
      done,
    };
  }

  /**
   * Releases a job, starts it as soon as every shard is ready, and gathers each one's records. A shard that fails
   * (disconnects, falls silent, reports a failure) is reported to `onFailure` at once - so the caller can stop the
   * others, which then still send what they measured - and listed in `failures`; the job resolves once every shard
   * answered or failed.
   */
  async runJob(job: JobMessage, onFailure: (f: ShardFailure) => void = () => {}): Promise<JobResults> {
    const released = this.releaseJob(job, onFailure);
    await released.ready;
    released.start(performance.timeOrigin + performance.now());
    return released.done;
  }

  /** Tells every shard to stop the job in flight (they still send what they measured). */
  stopAll(): void {
    for (const peer of this.peers.values()) peer.link.send({ t: "stop" });
  }

  /** Stops listening, tells the shards the run is over, closes their connections. */
  close(): void {
    if (this.watchdog) clearInterval(this.watchdog);
    for (const peer of this.peers.values()) {
      peer.failure ??= "the run ended";
      peer.link.send({ t: "stop" });
      peer.link.end();
    }
    // Not forced: the shards' connections close themselves once they read the stop.
    this.listener?.stop();
    this.listener = null;
  }

  /** Waits for a reply set up by `start`, or the shard's failure. */
  private await<T>(peer: PeerState, start: (done: (value: T) => void) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (peer.failure !== null) {
        reject(new ShardFailure(peer.rank, peer.failure));
        return;
      }
      const onFailure = (why: string) => reject(new ShardFailure(peer.rank, why));
      peer.onFailure.push(onFailure);
      start((value) => {
        peer.onFailure = peer.onFailure.filter((f) => f !== onFailure);
        resolve(value);
      });
    });
  }

  /** A new connection: its first message must be a valid hello from an expected, not yet joined rank. */
  private accept(link: Link): void {
    let peer: PeerState | null = null;
    // A connection that never says hello must not hold a socket for the rest of the run.
    const helloTimer = setTimeout(() => {
      if (peer === null && !link.closed) refuse("no hello within 10 s");
    }, 10_000);
    helloTimer.unref();
    const refuse = (why: string) => {
      clearTimeout(helloTimer);
      this.o.note(`refused a shard connection: ${why}`);
      link.send({ t: "reject", reason: why });
      link.end();
      setTimeout(() => link.destroy(), 1000).unref();
    };
    link.events = {
      message: (raw) => {
        const m = parseShardMessage(raw);
        if (peer === null) {
          if (typeof m === "string") return refuse(m);
          if (m.t !== "hello") return refuse(`expected hello, got ${m.t}`);
          if (!tokensEqual(m.token, this.o.token)) return refuse(`wrong token (rank ${m.rank})`);
          if (m.version !== PROTOCOL_VERSION) return refuse(`protocol version ${m.version}, expected ${PROTOCOL_VERSION}`);
          if (m.size !== this.o.size) return refuse(`rank ${m.rank} says ${m.size} shards, this run has ${this.o.size}`);
          if (m.rank < 1 || m.rank >= this.o.size) return refuse(`rank ${m.rank} is not in 1..${this.o.size - 1}`);
          if (this.peers.has(m.rank)) return refuse(`rank ${m.rank} joined already`);
          peer = {
            rank: m.rank,
            host: m.host,
            pid: m.pid,
            clockOffsetMs: 0,
            clockRttMs: 0,
            link,
            lastHeardMs: performance.now(),
            onRecords: new Map(),
            onReady: new Map(),
            early: new Map(),
            onPong: null,
            failure: null,
            onFailure: [],
          };
          clearTimeout(helloTimer);
          this.peers.set(m.rank, peer);
          link.send({ t: "welcome", setup: this.o.setup });
          if (this.peers.size === this.o.size - 1) this.joinedWaiter?.();
          return;
        }
        peer.lastHeardMs = performance.now();
        if (typeof m === "string") return this.fail(peer, `sent a malformed message (${m})`);
        if (m.t === "records") {
          const waiter = peer.onRecords.get(m.job);
          if (waiter !== undefined) waiter(m);
          else peer.early.set(m.job, m);
        } else if (m.t === "ready") peer.onReady.get(m.job)?.();
        else if (m.t === "pong") peer.onPong?.(m.id, m.shardEpochMs);
        else if (m.t === "failed") this.fail(peer, `failed: ${m.message}`);
      },
      protocolError: (reason) => {
        if (peer === null) this.o.note(`refused a shard connection: ${reason}`);
        else this.fail(peer, `broke the protocol (${reason})`);
      },
      closed: () => {
        if (peer !== null) this.fail(peer, "disconnected");
      },
    };
  }

  private fail(peer: PeerState, why: string): void {
    if (peer.failure !== null) return;
    peer.failure = `shard ${peer.rank} (${peer.host}, pid ${peer.pid}) ${why}`;
    peer.link.destroy();
    for (const f of peer.onFailure.splice(0)) f(peer.failure);
  }

  private checkSilence(): void {
    const now = performance.now();
    for (const peer of this.peers.values()) {
      if (peer.failure === null && now - peer.lastHeardMs > this.o.silenceTimeoutMs) {
        this.fail(peer, `sent nothing for ${+(this.o.silenceTimeoutMs / 1000).toFixed(1)} s (hung?)`);
      }
    }
  }
}
