/**
 * Client-side routing over replicas (`--base-url A,B,C --route POLICY`), to A/B routing policies without deploying a
 * router. The producer names each request's keys (its session: the conversation, or the sweep's prefix group; its
 * prefix: the first page it shares, or none); the router picks a replica as the request is sent and counts it in
 * flight until it settles. Policies:
 *
 *   round-robin      replicas in turn;
 *   random           uniformly, from the run's seed (reproducible);
 *   least-in-flight  the replica with the fewest requests in flight (lowest index on ties);
 *   session          a consistent (rendezvous) hash of the session key;
 *   prefix           a consistent hash of the prefix key (a request sharing nothing: least in flight);
 *   oracle           the replica the client's model says holds the request's prefix (an LRU of prefixes per replica at
 *                    its capacity, warmed prefixes included), the least loaded of them; a replica past twice the mean
 *                    in flight (plus one) is passed over for the least loaded one, which then holds the prefix too.
 */
import { PyRandom } from "../workload/rng.ts";
import type { RoutePolicy } from "../config/route-policies.ts";

/** A router in front of the replicas: its URL, the header it reads the session from, the one naming its choice. */
export interface RouterVia {
  url: string;
  keyHeader: string | null;
  servedHeader: string;
}

export interface RouteKeys {
  session: number;
  /** Null: the request shares no prefix worth routing on. */
  prefix: number | null;
}

/** 32-bit mix (a murmur3 finalizer): keys and replica numbers spread evenly. */
function mix(x: number): number {
  let h = x | 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Rendezvous (highest random weight) hashing: adding a replica moves only the keys it wins. */
export function rendezvous(key: number, replicas: number): number {
  let best = 0;
  let bestWeight = -1;
  for (let r = 0; r < replicas; r++) {
    const w = mix(mix(key) ^ mix(r + 0x9e3779b9));
    if (w > bestWeight) {
      bestWeight = w;
      best = r;
    }
  }
  return best;
}

export class ReplicaRouter {
  private readonly inFlight: Int32Array;
  private next = 0;
  private readonly rng: PyRandom;
  /** Per replica, the prefixes the client's model says it holds, least recent first. */
  private readonly held: Array<Map<number, true>>;
  /** The replica each request was sent to, by request index (behind a router: the one its response named). */
  readonly assigned = new Map<number, number>();
  /** Behind a router: requests whose response named no replica of the list. */
  unattributed = 0;

  constructor(
    readonly urls: readonly string[],
    readonly policy: RoutePolicy | "router",
    private readonly keysOf: (index: number) => RouteKeys,
    o: {
      seed: bigint;
      prefixes: readonly number[];
      prefixesHeld: readonly (number | null)[];
      warmedEverywhere?: boolean;
      via?: RouterVia;
      /** The first request that carries each prefix (where a spreading policy first sends it). */
      firstIndexOf?: (prefix: number) => number;
    },
  ) {
    this.via = o.via ?? null;
    this.hosts = urls.map((u) => new URL(u).host);
    this.inFlight = new Int32Array(urls.length);
    this.rng = new PyRandom(o.seed);
    this.seed = o.seed;
    this.firstIndexOf = o.firstIndexOf ?? ((p) => p);
    const warmedOn = (p: number, r: number) => o.warmedEverywhere === true || this.warmsOn(p).includes(r);
    this.held = urls.map((_, r) => new Map(o.prefixes.filter((p) => warmedOn(p, r)).map((p) => [p, true] as const)));
    this.capacity = o.prefixesHeld;
  }

  private readonly seed: bigint;
  private readonly firstIndexOf: (prefix: number) => number;
  /** The random policy's first draws, as replicas (what it will pick for the k-th request sent). */
  private readonly draws: number[] = [];
  private warmRng: PyRandom | null = null;

  /**
   * The replicas a prefix is warmed on before the line: where the route first sends it - its home by a consistent
   * hash (session, prefix, and the oracle, which then sends it where the model says it is held), or the replica a
   * spreading policy picks for the prefix's first request (sent in order: round-robin's turn, random's draw,
   * least-in-flight's emptiest) - or, with `all` (or behind a router, which the client cannot foresee), every replica.
   */
  warmsOn(prefix: number, all = false): number[] {
    const n = this.urls.length;
    if (this.policy === "router" || all) return this.urls.map((_, r) => r);
    if (this.policy === "session" || this.policy === "prefix" || this.policy === "oracle") return [rendezvous(prefix, n)];
    const first = this.firstIndexOf(prefix);
    if (this.policy === "random") {
      // Its own generator from the run's seed: the same draws the picks will make, in order, kept as they are made.
      this.warmRng ??= new PyRandom(this.seed);
      while (this.draws.length <= first) this.draws.push(Math.floor(this.warmRng.random() * n));
      return [this.draws[first]!];
    }
    // Round-robin takes replicas in turn; least-in-flight, before anything has ended, the emptiest (lowest on ties).
    return [first % n];
  }

  private readonly capacity: readonly (number | null)[];
  /** Each replica's host:port, parsed once: a router's served-by header names one per response. */
  private readonly hosts: readonly string[];
  /** A router in front routes the measured requests (--replicas): where they go, and the headers that carry its choice. */
  readonly via: RouterVia | null;

  /** Behind a router (--replicas): the replica a response's header names, matched by URL or host:port; null: none. */
  attribute(index: number, servedBy: string | null | undefined): number | null {
    const r = servedBy === null || servedBy === undefined ? -1 : replicaNamed(this.urls, this.hosts, servedBy);
    if (r < 0) {
      this.unattributed++;
      return null;
    }
    this.assigned.set(index, r);
    return r;
  }

  /** The session key a router reads (--routing-key): the request's session as text. */
  sessionOf(index: number): string {
    return String(this.keysOf(index).session);
  }

  /** The replica request `index` goes to; it counts in flight there until done(). */
  pick(index: number): number {
    const r = this.choose(index);
    this.inFlight[r]!++;
    this.assigned.set(index, r);
    return r;
  }

  done(replica: number): void {
    this.inFlight[replica]!--;
  }

  private leastLoaded(among?: readonly number[]): number {
    if (among !== undefined) {
      let best = among[0]!;
      for (const r of among) if (this.inFlight[r]! < this.inFlight[best]!) best = r;
      return best;
    }
    let best = 0;
    for (let r = 1; r < this.inFlight.length; r++) if (this.inFlight[r]! < this.inFlight[best]!) best = r;
    return best;
  }

  private choose(index: number): number {
    const n = this.urls.length;
    switch (this.policy) {
      case "round-robin":
        return this.next++ % n;
      case "random":
        return Math.floor(this.rng.random() * n);
      case "least-in-flight":
        return this.leastLoaded();
      case "session":
        return rendezvous(this.keysOf(index).session, n);
      case "prefix": {
        const key = this.keysOf(index).prefix;
        return key === null ? this.leastLoaded() : rendezvous(key, n);
      }
      case "oracle":
        return this.oracle(this.keysOf(index).prefix);
      case "router":
        throw new Error("ReplicaRouter: behind a router the client does not pick (attribute() reads its choice)");
    }
  }

  private oracle(prefix: number | null): number {
    if (prefix === null) return this.leastLoaded();
    const holders = this.urls.map((_, r) => r).filter((r) => this.held[r]!.has(prefix));
    let r = holders.length > 0 ? this.leastLoaded(holders) : this.leastLoaded();
    const total = this.inFlight.reduce((a, b) => a + b, 0);
    const cap = 2 * (total / this.urls.length) + 1;
    if (this.inFlight[r]! > cap) r = this.leastLoaded();
    this.touch(r, prefix);
    return r;
  }

  /** The model: the prefix is now the most recent on replica r, the least recent ones leave past its capacity. */
  private touch(r: number, prefix: number): void {
    const held = this.held[r]!;
    held.delete(prefix);
    held.set(prefix, true);
    const cap = this.capacity[r] ?? null;
    if (cap === null) return;
    for (const old of held.keys()) {
      if (held.size <= Math.max(1, cap)) break;
      held.delete(old);
    }
  }
}

/**
 * Which replica a served-by header value names: a URL of the list, its host:port (nginx's $upstream_addr), or its
 * place in the list (0-based); -1 when none.
 */
function replicaNamed(urls: readonly string[], hosts: readonly string[], value: string): number {
  const v = value.trim();
  const bare = v.replace(/^https?:\/\//, "").replace(/\/+$/, "");
  const i = urls.findIndex((u, r) => u === v || hosts[r] === v || hosts[r] === bare);
  if (i >= 0) return i;
  return /^\d+$/.test(v) && Number(v) < urls.length ? Number(v) : -1;
}
