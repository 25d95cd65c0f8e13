/**
 * Agentic sessions as a request source with an injected clock: it knows nothing of HTTP. `next(nowMs)` hands out
 * the requests due by then, each with its intended send time; `finished(requestId, endMs)` feeds an answer's end
 * back, which is what releases the calls waiting on it. Intended times are computed from intended sends and reported
 * ends only, so a late client never shifts the schedule (its lag is measured against it).
 *
 * The rules (each named, recorded in the line by the caller):
 * - within a chain, a call is sent after the previous call's answer plus its delay (`delay`): `think-time` (the
 *   trace's `think_time`; where absent, the recorded end-to-start gap), `start-to-start` (the recorded `t` gap counted
 *   from the previous intended send, but never before its answer), `end-to-start` (the recorded gap from the previous
 *   call's recorded end, `t + api_time`, to this send); the first call of a chain follows its chain's start by its
 *   recorded offset;
 * - a subagent's chain starts after the parent call it follows (session-plan.ts: its anchor) ends, plus the recorded
 *   gap from that call's end to the spawn (its send, under `start-to-start`), or after the parent chain's own start
 *   when no call precedes it; the spawn rule says when the recorded spawn was;
 * - a call the join rule gives children to also waits for each child's whole subtree to end, plus the recorded gap
 *   from the child's recorded end to the call;
 * - every gap is clamped to [0, maxIdleS] trace seconds (the idle-gap cap), then multiplied by `timeScale`;
 * - `lanes` session trees run at once; each lane takes the next trace (in corpus order, cycling: a clone) when its
 *   tree drains, until `sessions` trees have run;
 * - `startAt` (a fraction, or a range sampled per lane from `seed`): each lane's first tree starts at t* = that
 *   fraction of its recorded duration. Calls recorded before t* are history, not sent, except the last one of every
 *   chain that has calls after t*: those are sent at once as warm-up (`warmup: true`, off the clock), and the rest
 *   of the tree is timed from when the last warm-up ends (P), every reference into the history reading as (P, t*).
 */
import { PyRandom } from "../rng.ts";
import { type JoinRule, type SpawnRule, type TreePlan, planTree } from "./session-plan.ts";
import type { AgenticCall, AgenticTrace } from "./session-tree.ts";

export const DELAY_RULES = ["think-time", "start-to-start", "end-to-start"] as const;
export type DelayRule = (typeof DELAY_RULES)[number];

export interface ScheduleOptions {
  delay: DelayRule;
  spawn: SpawnRule;
  join: JoinRule;
  /** Idle-gap cap, trace seconds; null: none. */
  maxIdleS: number | null;
  /** Multiplies every gap (0.1: ten times faster). */
  timeScale: number;
  /** Session trees in flight at once. */
  lanes: number;
  /** Trees to run in all (more than the corpus: clones). */
  sessions: number;
  /** Each lane's first tree starts at a fraction of its duration drawn from [from, to]; null: from the start. */
  startAt: { from: number; to: number } | null;
  seed: bigint;
  /** When the lanes start, on the caller's clock. */
  originMs: number;
}

export interface ScheduledRequest {
  /** Sequential, in the order the source hands requests out. */
  requestId: number;
  intendedMs: number;
  /** History before t*, sent only to warm the cache. */
  warmup: boolean;
  lane: number;
  /** The tree's replay instance (0-based, in start order): with `clone`, what its prompt namespace derives from. */
  instance: number;
  clone: number;
  trace: AgenticTrace;
  /** `""` for the root chain, else agent ids joined by "/". */
  agentPath: string;
  turn: number;
  /** The call's place in its tree (keys its prompt tail). */
  ordinal: number;
  call: AgenticCall;
}

/** A reference time: what actually happened (ms, the caller's clock) and when the trace recorded it (s). */
interface Ref {
  actualMs: number;
  recordedS: number;
}

/** What a computation waits for: a call's end, a chain's subtree's end, or the warm-up's end. */
type Blocker = `c${number}` | `t${number}` | "w";

class Tree {
  readonly startMs: number[];
  readonly endMs: number[];
  readonly history: boolean[];
  readonly warmups: number[];
  /** Per chain: calls of its subtree not yet ended (history excluded). */
  readonly remaining: number[];
  /** The chains each call's end counts down (its chain and every ancestor). */
  readonly ancestry: number[][];
  readonly waiters = new Map<Blocker, number[]>();
  warmLeft: number;
  profileMs: number | null = null;
  drained = false;

  constructor(
    readonly plan: TreePlan,
    readonly lane: number,
    readonly instance: number,
    readonly clone: number,
    readonly originMs: number,
    readonly tStarS: number | null,
  ) {
    const n = plan.calls.length;
    this.startMs = new Array(n).fill(Number.NaN);
    this.endMs = new Array(n).fill(Number.NaN);
    this.history = plan.calls.map((c) => tStarS !== null && c.startS < tStarS);
    this.remaining = plan.chains.map((ch) => ch.subtree.filter((k) => !this.history[k]).length);
    this.ancestry = plan.calls.map((c) => {
      const up: number[] = [];
      for (let ch = c.chain; ch >= 0; ch = plan.chains[ch]!.parent) up.push(ch);
      return up;
    });
    // Warm-up: the last history call of each chain that goes on after t*.
    this.warmups = plan.chains.flatMap((_, ch) => {
      const own = plan.calls.filter((c) => c.chain === ch);
      const last = own.filter((c) => this.history[c.ordinal]).at(-1);
      return last !== undefined && own.some((c) => !this.history[c.ordinal]) ? [last.ordinal] : [];
    });
    this.warmLeft = this.warmups.length;
  }
}

export class SessionSchedule {
  private readonly plans: TreePlan[];
  private readonly trees: Tree[] = [];
  /** Released requests not yet handed out: [intendedMs, tree, call], a binary heap on (intendedMs, release order). */
  private readonly heap: { ms: number; seq: number; tree: number; call: number }[] = [];
  private seq = 0;
  private nextId = 0;
  private nextInstance = 0;
  private readonly byId = new Map<number, { tree: number; call: number; warmup: boolean }>();
  private readonly lanePick: number[];

  constructor(
    corpus: readonly AgenticTrace[],
    private readonly o: ScheduleOptions,
  ) {
    if (corpus.length === 0) throw new Error("session schedule: an empty corpus");
    this.plans = corpus.map((t) => planTree(t, o.spawn, o.join));
    const rng = new PyRandom(o.seed);
    this.lanePick = Array.from({ length: o.lanes }, () => (o.startAt === null ? 0 : o.startAt.from + (o.startAt.to - o.startAt.from) * rng.random()));
    for (let lane = 0; lane < o.lanes && this.nextInstance < o.sessions; lane++) this.startTree(lane, o.originMs, true);
  }

  /** The requests due by `nowMs`, in intended order. */
  next(nowMs: number): ScheduledRequest[] {
    const out: ScheduledRequest[] = [];
    while (this.heap.length > 0 && this.heap[0]!.ms <= nowMs) {
      const top = this.pop();
      const tree = this.trees[top.tree]!;
      const pc = tree.plan.calls[top.call]!;
      const requestId = this.nextId++;
      const warmup = tree.history[top.call]!;
      this.byId.set(requestId, { tree: top.tree, call: top.call, warmup });
      out.push({
        requestId,
        intendedMs: top.ms,
        warmup,
        lane: tree.lane,
        instance: tree.instance,
        clone: tree.clone,
        trace: tree.plan.trace,
        agentPath: tree.plan.chains[pc.chain]!.agentPath,
        turn: pc.turn,
        ordinal: pc.ordinal,
        call: pc.call,
      });
    }
    return out;
  }

  /** When the next known request is due; null when none is released (waiting on answers, or done). */
  nextDueMs(): number | null {
    return this.heap.length > 0 ? this.heap[0]!.ms : null;
  }

  /** Every tree has run and drained. */
  done(): boolean {
    return this.nextInstance >= this.o.sessions && this.trees.every((t) => t.drained) && this.heap.length === 0;
  }

  /** A handed-out request's answer ended (or failed: the session goes on, as AIPerf releases a join on an error). */
  finished(requestId: number, endMs: number): void {
    const at = this.byId.get(requestId);
    if (at === undefined) throw new Error(`session schedule: request ${requestId} was not handed out`);
    this.byId.delete(requestId);
    const tree = this.trees[at.tree]!;
    tree.endMs[at.call] = endMs;
    if (at.warmup) {
      if (--tree.warmLeft === 0) {
        tree.profileMs = Math.max(...tree.warmups.map((k) => tree.endMs[k]!));
        this.resolve(at.tree, "w");
      }
    } else {
      this.resolve(at.tree, `c${at.call}`);
      for (const ch of tree.ancestry[at.call]!) if (--tree.remaining[ch]! === 0) this.resolve(at.tree, `t${ch}`);
    }
    this.checkDrained(at.tree);
  }

  private startTree(lane: number, atMs: number, first: boolean): void {
    const instance = this.nextInstance++;
    const plan = this.plans[instance % this.plans.length]!;
    const fraction = first ? this.lanePick[lane]! : 0;
    const tStarS = fraction > 0 ? fraction * plan.durationS : null;
    const index = this.trees.length;
    const tree = new Tree(plan, lane, instance, Math.floor(instance / this.plans.length), atMs, tStarS);
    this.trees.push(tree);
    for (const k of tree.warmups) this.release(index, k, atMs);
    if (tree.warmLeft === 0) tree.profileMs = atMs;
    plan.calls.forEach((c) => {
      if (!tree.history[c.ordinal]) this.attempt(index, c.ordinal);
    });
    this.checkDrained(index);
  }

  private checkDrained(index: number): void {
    const tree = this.trees[index]!;
    if (tree.drained || tree.profileMs === null || tree.remaining[0]! > 0) return;
    tree.drained = true;
    const ends = tree.plan.calls.filter((c) => !tree.history[c.ordinal]).map((c) => tree.endMs[c.ordinal]!);
    const drainMs = Math.max(tree.profileMs, ...ends);
    if (this.nextInstance < this.o.sessions) this.startTree(tree.lane, drainMs, false);
  }

  private resolve(index: number, key: Blocker): void {
    const tree = this.trees[index]!;
    const list = tree.waiters.get(key);
    if (list === undefined) return;
    tree.waiters.delete(key);
    for (const k of list) this.attempt(index, k);
  }

  /** Releases call k if everything it waits for is known, else waits on the first unknown. */
  private attempt(index: number, k: number): void {
    const tree = this.trees[index]!;
    const ready = this.readyMs(tree, k);
    if (typeof ready === "number") {
      this.release(index, k, ready);
      return;
    }
    const list = tree.waiters.get(ready);
    if (list === undefined) tree.waiters.set(ready, [k]);
    else list.push(k);
  }

  /** Trace seconds to ms: clamped to [0, maxIdleS], scaled. */
  private gapMs(s: number): number {
    const clamped = Math.max(0, this.o.maxIdleS === null ? s : Math.min(s, this.o.maxIdleS));
    return clamped * 1000 * this.o.timeScale;
  }

  private historyRef(tree: Tree): Ref | Blocker {
    return tree.profileMs === null ? "w" : { actualMs: tree.profileMs, recordedS: tree.tStarS ?? 0 };
  }

  private chainStart(tree: Tree, ch: number): Ref | Blocker {
    const chain = tree.plan.chains[ch]!;
    if (tree.tStarS !== null && chain.spawnS < tree.tStarS) return this.historyRef(tree);
    if (chain.parent < 0) return { actualMs: tree.originMs, recordedS: 0 };
    const at = (ref: Ref | Blocker): Ref | Blocker =>
      typeof ref === "string" ? ref : { actualMs: ref.actualMs + this.gapMs(chain.spawnS - ref.recordedS), recordedS: chain.spawnS };
    if (chain.anchor < 0) return at(this.chainStart(tree, chain.parent));
    const a = tree.plan.calls[chain.anchor]!;
    if (tree.history[a.ordinal]) return at(this.historyRef(tree));
    const endMs = tree.endMs[a.ordinal]!;
    if (Number.isNaN(endMs)) return `c${a.ordinal}`;
    const actualMs =
      this.o.delay === "start-to-start"
        ? Math.max(endMs, tree.startMs[a.ordinal]! + this.gapMs(chain.spawnS - a.startS))
        : endMs + this.gapMs(chain.spawnS - a.endS);
    return { actualMs, recordedS: chain.spawnS };
  }

  private subtreeEnd(tree: Tree, ch: number): Ref | Blocker {
    const chain = tree.plan.chains[ch]!;
    if (tree.remaining[ch]! > 0) return `t${ch}`;
    const live = chain.subtree.filter((k) => !tree.history[k]);
    if (live.length < chain.subtree.length && tree.profileMs === null) return "w";
    if (live.length === 0) return this.historyRef(tree);
    const ends = live.map((k) => tree.endMs[k]!);
    return { actualMs: Math.max(...ends, tree.profileMs ?? Number.NEGATIVE_INFINITY), recordedS: chain.endS };
  }

  private readyMs(tree: Tree, k: number): number | Blocker {
    const pc = tree.plan.calls[k]!;
    let ready: number;
    if (pc.prev < 0) {
      const start = this.chainStart(tree, pc.chain);
      if (typeof start === "string") return start;
      ready = start.actualMs + this.gapMs(pc.startS - start.recordedS);
    } else if (tree.history[pc.prev]) {
      const h = this.historyRef(tree);
      if (typeof h === "string") return h;
      ready = h.actualMs + this.gapMs(pc.startS - h.recordedS);
    } else {
      const p = tree.plan.calls[pc.prev]!;
      const endMs = tree.endMs[p.ordinal]!;
      if (Number.isNaN(endMs)) return `c${p.ordinal}`;
      if (this.o.delay === "think-time") ready = endMs + this.gapMs(pc.call.thinkTimeS ?? pc.startS - p.endS);
      else if (this.o.delay === "end-to-start") ready = endMs + this.gapMs(pc.startS - p.endS);
      else ready = Math.max(endMs, tree.startMs[p.ordinal]! + this.gapMs(pc.startS - p.startS));
    }
    for (const child of pc.joins) {
      const end = this.subtreeEnd(tree, child);
      if (typeof end === "string") return end;
      ready = Math.max(ready, end.actualMs + this.gapMs(pc.startS - end.recordedS));
    }
    return ready;
  }

  private release(index: number, k: number, ms: number): void {
    this.trees[index]!.startMs[k] = ms;
    this.heap.push({ ms, seq: this.seq++, tree: index, call: k });
    let i = this.heap.length - 1;
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (!before(this.heap[i]!, this.heap[up]!)) break;
      [this.heap[i], this.heap[up]] = [this.heap[up]!, this.heap[i]!];
      i = up;
    }
  }

  private pop(): { ms: number; seq: number; tree: number; call: number } {
    const h = this.heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l]!, h[m]!)) m = l;
        if (r < h.length && before(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}

const before = (a: { ms: number; seq: number }, b: { ms: number; seq: number }): boolean => a.ms < b.ms || (a.ms === b.ms && a.seq < b.seq);
