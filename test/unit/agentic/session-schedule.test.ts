/**
 * The session schedule against an independent one: the synthetic corpus (50 sessions, 200 subagents, some nested,
 * some at a chain's start or end, some fields null) is scheduled by the source driven by a fake clock and a fake
 * server, and by a recursive definition written here from the rules alone (it shares no code with
 * src/workload/agentic: its own reading of the JSON, anchors, joins and gaps). Every request's intended send must
 * agree, for every delay, spawn and join rule.
 */
import { describe, expect, test } from "bun:test";
import { DELAY_RULES, type DelayRule, SessionSchedule, type ScheduleOptions, type ScheduledRequest } from "../../../src/workload/agentic/session-schedule.ts";
import { JOIN_RULES, type JoinRule, SPAWN_RULES, type SpawnRule } from "../../../src/workload/agentic/session-plan.ts";
import { parseWekaTraces } from "../../../src/workload/agentic/weka-trace.ts";
import type { AgenticTrace } from "../../../src/workload/agentic/session-tree.ts";
import { seededUniform as rng } from "../../../src/metrics/seeded-uniform.ts";

// ---- the synthetic corpus --------------------------------------------------------------------------------------

type J = Record<string, unknown> & { requests?: J[] };

function syntheticCorpus(sessions: number, subagents: number, seed: number): { text: string; subagentCount: number } {
  const r = rng(seed);
  const calls = (n: number, t0: number): J[] => {
    const out: J[] = [];
    let t = t0;
    for (let i = 0; i < n; i++) {
      const api = 0.5 + r() * 8;
      const think = r() * 20;
      out.push({
        t: Math.round(t * 10) / 10,
        type: "n",
        in: 64,
        out: 10,
        hash_ids: [i + 1],
        think_time: r() < 0.2 ? null : Math.round(think * 10) / 10,
        api_time: r() < 0.1 ? null : Math.round(api * 100) / 100,
      });
      t += api + think;
    }
    return out;
  };
  const owners = Array.from({ length: subagents }, () => Math.floor(r() * sessions));
  const lines: string[] = [];
  let made = 0;
  for (let s = 0; s < sessions; s++) {
    const root: J = { id: `s${s}`, block_size: 64, hash_id_scope: "local", requests: calls(3 + Math.floor(r() * 10), 0) };
    const chains: J[] = [root];
    const mine = owners.filter((o) => o === s).length;
    for (let k = 0; k < mine; k++) {
      const host = chains[r() < 0.25 ? Math.floor(r() * chains.length) : 0]!;
      const steps = host.requests!;
      const at = Math.floor(r() * (steps.length + 1));
      const before = steps
        .slice(0, at)
        .filter((x) => x.type !== "subagent")
        .at(-1);
      const inner = calls(1 + Math.floor(r() * 5), 0);
      const dur = 5 + r() * 60;
      const sub: J = {
        type: "subagent",
        agent_id: `a${k}`,
        t: Math.round(((before === undefined ? 0 : (before.t as number)) + dur + r() * 5) * 1000) / 1000,
        duration_ms: r() < 0.15 ? null : Math.round(dur * 1000),
        requests: inner,
      };
      steps.splice(at, 0, sub);
      chains.push(sub);
      made++;
    }
    lines.push(JSON.stringify(root));
  }
  return { text: `${lines.join("\n")}\n`, subagentCount: made };
}

// ---- the independent schedule (from the rules alone) -----------------------------------------------------------

interface Node {
  key: string;
  path: string;
  turn: number;
  recStart: number;
  recEnd: number;
  think: number | null;
  prev: Node | null;
  chain: Chain;
  joins: Chain[];
}
interface Chain {
  path: string;
  parent: Chain | null;
  spawn: number;
  recEnd: number;
  anchor: Node | null;
  all: Node[];
}

function readTree(rec: J, spawnRule: SpawnRule, joinRule: JoinRule, instance: number): Chain {
  const build = (steps: J[], path: string, parent: Chain | null, spawn: number, origin: number | null, anchor: Node | null): Chain => {
    const ch: Chain = { path, parent, spawn, recEnd: spawn, anchor, all: [] };
    const own: Node[] = [];
    const kids: { chain: Chain; afterOwn: number }[] = [];
    for (const st of steps) {
      if (st.type !== "subagent") {
        const rs = (origin ?? 0) + (st.t as number);
        const n: Node = {
          key: `${instance}|${path}|${own.length}`,
          path,
          turn: own.length,
          recStart: rs,
          recEnd: rs + ((st.api_time as number | null) ?? 0),
          think: st.think_time as number | null,
          prev: own.at(-1) ?? null,
          chain: ch,
          joins: [],
        };
        own.push(n);
        ch.all.push(n);
        continue;
      }
      const dur = st.duration_ms === null ? null : (st.duration_ms as number) / 1000;
      const sub = path === "" ? (st.agent_id as string) : `${path}/${st.agent_id}`;
      let child: Chain;
      if (spawnRule === "absolute") {
        const first = (st.requests as J[]).find((x) => x.type !== "subagent")!.t as number;
        child = build(st.requests as J[], sub, ch, first, null, own.at(-1) ?? null);
      } else {
        const sp = spawnRule === "result-minus-duration" && dur !== null ? Math.max(0, (st.t as number) - dur) : (st.t as number);
        child = build(st.requests as J[], sub, ch, sp, sp, own.at(-1) ?? null);
        if (dur !== null) child.recEnd = sp + dur;
      }
      ch.all.push(...child.all);
      kids.push({ chain: child, afterOwn: own.length });
    }
    ch.recEnd = Math.max(ch.recEnd, ...ch.all.map((n) => n.recEnd));
    for (const k of kids) {
      const later = own.slice(k.afterOwn);
      const w = joinRule === "none" ? undefined : joinRule === "next-call" ? later[0] : later.find((n) => n.recStart >= k.chain.recEnd);
      w?.joins.push(k.chain);
    }
    return ch;
  };
  return build(rec.requests!, "", null, 0, 0, null);
}

function expectedTree(root: Chain, startMs: number, o: { delay: DelayRule; maxIdle: number | null; scale: number }, latency: (key: string) => number) {
  const gap = (s: number) => Math.max(0, o.maxIdle === null ? s : Math.min(s, o.maxIdle)) * 1000 * o.scale;
  const starts = new Map<Node, number>();
  const chainStarts = new Map<Chain, number>();
  const end = (n: Node) => start(n) + latency(n.key);
  const subEnd = (c: Chain) => Math.max(...c.all.map(end));
  function chainStart(c: Chain): number {
    if (!chainStarts.has(c)) {
      let v: number;
      if (c.parent === null) v = startMs;
      else if (c.anchor === null) v = chainStart(c.parent) + gap(c.spawn - c.parent.spawn);
      else if (o.delay === "start-to-start") v = Math.max(end(c.anchor), start(c.anchor) + gap(c.spawn - c.anchor.recStart));
      else v = end(c.anchor) + gap(c.spawn - c.anchor.recEnd);
      chainStarts.set(c, v);
    }
    return chainStarts.get(c)!;
  }
  function start(n: Node): number {
    if (!starts.has(n)) {
      let v: number;
      const p = n.prev;
      if (p === null) v = chainStart(n.chain) + gap(n.recStart - n.chain.spawn);
      else if (o.delay === "think-time") v = end(p) + gap(n.think ?? n.recStart - p.recEnd);
      else if (o.delay === "end-to-start") v = end(p) + gap(n.recStart - p.recEnd);
      else v = Math.max(end(p), start(p) + gap(n.recStart - p.recStart));
      for (const j of n.joins) v = Math.max(v, subEnd(j) + gap(n.recStart - j.recEnd));
      starts.set(n, v);
    }
    return starts.get(n)!;
  }
  const out = new Map<string, number>();
  for (const n of root.all) out.set(n.key, start(n));
  return { starts: out, drainMs: subEnd(root), joined: root.all.filter((n) => n.joins.length > 0) };
}

/** The expected intended send of every request of every instance, lanes taking the next trace as they drain. */
function expectedRun(
  records: J[],
  o: { delay: DelayRule; spawn: SpawnRule; join: JoinRule; maxIdle: number | null; scale: number; lanes: number; sessions: number },
  latency: (key: string) => number,
) {
  const all = new Map<string, number>();
  const lanes = Array.from({ length: o.lanes }, () => 0);
  for (let instance = 0; instance < o.sessions; instance++) {
    // The lane that drains first takes the next instance (the first `lanes` instances start at 0).
    let lane = 0;
    for (let l = 1; l < o.lanes; l++) if (lanes[l]! < lanes[lane]!) lane = l;
    const tree = readTree(records[instance % records.length]!, o.spawn, o.join, instance);
    const got = expectedTree(tree, lanes[lane]!, { delay: o.delay, maxIdle: o.maxIdle, scale: o.scale }, latency);
    for (const [k, v] of got.starts) all.set(k, v);
    lanes[lane] = got.drainMs;
  }
  return all;
}

// ---- driving the source --------------------------------------------------------------------------------------

function latencyOf(key: string): number {
  let h = 2166136261;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619);
  return 50 + ((h >>> 0) % 100_000) / 33.3;
}

function drive(src: SessionSchedule, latency: (r: ScheduledRequest) => number): ScheduledRequest[] {
  const sent: ScheduledRequest[] = [];
  const inflight: { endMs: number; id: number }[] = [];
  let now = 0;
  for (let guard = 0; guard < 1_000_000; guard++) {
    for (const r of src.next(now)) {
      expect(r.intendedMs).toBeLessThanOrEqual(now);
      sent.push(r);
      inflight.push({ endMs: r.intendedMs + latency(r), id: r.requestId });
    }
    const due = src.nextDueMs();
    const nextEnd = inflight.reduce((m, f) => Math.min(m, f.endMs), Number.POSITIVE_INFINITY);
    if (due === null && inflight.length === 0) break;
    if (due === null || nextEnd <= due) {
      now = nextEnd;
      for (const f of inflight.filter((x) => x.endMs === now)) {
        inflight.splice(inflight.indexOf(f), 1);
        src.finished(f.id, f.endMs);
      }
    } else now = due;
  }
  expect(src.done()).toBe(true);
  return sent;
}

const keyOf = (r: ScheduledRequest) => `${r.instance}|${r.agentPath}|${r.turn}`;

const base: ScheduleOptions = {
  delay: "think-time",
  spawn: "result-minus-duration",
  join: "first-after-end",
  maxIdleS: 10,
  timeScale: 0.5,
  lanes: 8,
  sessions: 50,
  startAt: null,
  seed: 1n,
  originMs: 0,
};

describe("session schedule: 50 sessions, 200 subagents, against an independent schedule", () => {
  const { text, subagentCount } = syntheticCorpus(50, 200, 38);
  const corpus = parseWekaTraces("synthetic.jsonl", text);
  const records = text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as J);

  test("the corpus: 50 sessions, 200 subagents, some nested", () => {
    expect(corpus.length).toBe(50);
    expect(subagentCount).toBe(200);
    const nested = (steps: AgenticTrace["steps"], depth: number): number =>
      steps.reduce((a, s) => a + (s.kind === "subagent" ? (depth > 0 ? 1 : 0) + nested(s.steps, depth + 1) : 0), 0);
    expect(corpus.reduce((a, t) => a + nested(t.steps, 0), 0)).toBeGreaterThan(10);
  });

  const combos = DELAY_RULES.flatMap((delay) => SPAWN_RULES.flatMap((spawn) => JOIN_RULES.map((join) => ({ delay, spawn, join }))));
  for (const c of combos) {
    test(`every request's intended send: delay ${c.delay}, spawn ${c.spawn}, join ${c.join}`, () => {
      const o = { ...base, ...c };
      const sent = drive(new SessionSchedule(corpus, o), (r) => latencyOf(keyOf(r)));
      const want = expectedRun(records, { ...c, maxIdle: o.maxIdleS, scale: o.timeScale, lanes: o.lanes, sessions: o.sessions }, latencyOf);
      expect(sent.length).toBe(want.size);
      let off = 0;
      for (const r of sent) {
        const w = want.get(keyOf(r));
        if (w === undefined || Math.abs(w - r.intendedMs) > 1e-6) off++;
      }
      expect(off).toBe(0);
      expect(new Set(sent.map(keyOf)).size).toBe(sent.length);
      expect(sent.every((r) => !r.warmup)).toBe(true);
    });
  }

  test("the corpus exercises the rules: joins that wait, subagents overlapping, lanes reused, no idle cap", () => {
    const o = { ...base, maxIdleS: null, timeScale: 0.01 };
    const sent = drive(new SessionSchedule(corpus, o), (r) => latencyOf(keyOf(r)));
    const want = expectedRun(records, { ...base, maxIdle: null, scale: 0.01, lanes: 8, sessions: 50 }, latencyOf);
    for (const r of sent) expect(Math.abs(want.get(keyOf(r))! - r.intendedMs)).toBeLessThan(1e-6);
    // A join binds where the parent's next call is sent later than its own delay would send it.
    let bound = 0;
    for (const [i, rec] of records.entries()) {
      const tree = readTree(rec, "result-minus-duration", "first-after-end", i);
      const noJoins = readTree(rec, "result-minus-duration", "none", i);
      const a = expectedTree(tree, 0, { delay: "think-time", maxIdle: null, scale: 0.01 }, latencyOf);
      const b = expectedTree(noJoins, 0, { delay: "think-time", maxIdle: null, scale: 0.01 }, latencyOf);
      for (const n of a.joined) if (a.starts.get(n.key)! > b.starts.get(n.key)! + 1e-9) bound++;
    }
    expect(bound).toBeGreaterThan(20);
    // Subagents spawned before any call of their parent chain, and children no call waits for (background).
    const chainsOf = (c: Chain): Chain[] => [c, ...[...new Set(c.all.map((n) => n.chain))].filter((x) => x.parent === c).flatMap(chainsOf)];
    const trees = records.map((rec, i) => readTree(rec, "result-minus-duration", "first-after-end", i));
    const children = trees.flatMap((t) => chainsOf(t).slice(1));
    expect(children.length).toBe(200);
    expect(children.filter((c) => c.anchor === null).length).toBeGreaterThan(5);
    const joinedChains = new Set(trees.flatMap((t) => t.all.flatMap((n) => n.joins)));
    expect(children.filter((c) => !joinedChains.has(c)).length).toBeGreaterThan(5);
    // Requests of one tree in flight at once (a subagent beside its parent or a sibling).
    const byInstance = new Map<number, [number, number][]>();
    for (const r of sent) {
      const spans = byInstance.get(r.instance) ?? [];
      spans.push([r.intendedMs, r.intendedMs + latencyOf(keyOf(r))]);
      byInstance.set(r.instance, spans);
    }
    let overlapping = 0;
    for (const spans of byInstance.values()) {
      spans.sort((x, y) => x[0] - y[0]);
      if (spans.some((s, i) => i > 0 && s[0] < Math.max(...spans.slice(0, i).map((p) => p[1])))) overlapping++;
    }
    expect(overlapping).toBeGreaterThan(10);
    expect(new Set(sent.map((r) => r.lane)).size).toBe(8);
  });
});

describe("session schedule: --start-at, warm-up and clones, by hand", () => {
  const call = (t: number, api: number, think: number) => ({ t, type: "n", in: 64, out: 4, hash_ids: [1], think_time: think, api_time: api });
  const rec = {
    id: "tiny",
    block_size: 64,
    requests: [
      call(0, 2, 0),
      call(10, 2, 8),
      { type: "subagent", agent_id: "sa", t: 18, duration_ms: 6000, requests: [call(0, 1, 0), call(3, 1, 2)] },
      call(20, 1, 8),
    ],
  };
  const corpus = parseWekaTraces("tiny.json", JSON.stringify(rec));
  const o: ScheduleOptions = { ...base, delay: "end-to-start", maxIdleS: null, timeScale: 1, lanes: 1, sessions: 2, startAt: { from: 0.5, to: 0.5 } };

  test("t* = half the recorded duration (10.5 s of 21): B warms at once, the rest is timed from its end as from t*", () => {
    const sent = drive(new SessionSchedule(corpus, o), () => 100);
    const rows = sent.map((r) => [r.intendedMs, r.warmup, r.agentPath, r.turn, r.instance, r.clone]);
    expect(rows).toEqual([
      // Warm-up: the root's last call before t* (B); P = its end, 100 ms.
      [0, true, "", 1, 0, 0],
      // The subagent spawns at 12 s (18 - 6): P + (12 - 10.5) s; Y follows X's end by 15 - 13 s.
      [1600, false, "sa", 0, 0, 0],
      [3700, false, "sa", 1, 0, 0],
      // C: P + (20 - 10.5) s; the join (the child ended at 3800, recorded 18 s: + 2 s) binds less.
      [9600, false, "", 2, 0, 0],
      // The lane's next tree (a clone: the corpus has one trace) starts when C ends, from turn 0.
      [9700, false, "", 0, 1, 1],
      [17800, false, "", 1, 1, 1],
      [17900, false, "sa", 0, 1, 1],
      [20000, false, "sa", 1, 1, 1],
      [25900, false, "", 2, 1, 1],
    ]);
  });

  test("t* inside a subagent (13.125 s): the last history call of each chain that goes on warms, both at once", () => {
    const sent = drive(new SessionSchedule(corpus, { ...o, sessions: 1, startAt: { from: 0.625, to: 0.625 } }), () => 100);
    expect(sent.map((r) => [r.intendedMs, r.warmup, r.agentPath, r.turn])).toEqual([
      [0, true, "", 1],
      [0, true, "sa", 0],
      // Y: P (100) + (15 - 13.125) s; C: P + (20 - 13.125) s, later than the join: Y ends 2075, + 2 s.
      [1975, false, "sa", 1],
      [6975, false, "", 2],
    ]);
  });

  test("the join binds when the child runs long; the idle cap clamps every gap", () => {
    const slowChild = (r: ScheduledRequest) => (r.agentPath === "sa" ? 9000 : 100);
    const sent = drive(new SessionSchedule(corpus, { ...o, sessions: 1 }), slowChild);
    // X 1600 -> 10600, Y 12600 -> 21600; C waits for it: 21600 + 2000.
    expect(sent.map((r) => r.intendedMs)).toEqual([0, 1600, 12600, 23600]);
    const capped = drive(new SessionSchedule(corpus, { ...o, sessions: 1, maxIdleS: 1 }), () => 100);
    // Every gap at most 1 s: the spawn 100 + 1000, Y 1200 + 1000, C 100 + 1000 but the join: 2300 + 1000.
    expect(capped.map((r) => r.intendedMs)).toEqual([0, 1100, 2200, 3300]);
  });

  test("a range is drawn per lane from the seed; the same seed draws the same", () => {
    const firsts = (seed: bigint) =>
      drive(new SessionSchedule(corpus, { ...o, lanes: 3, sessions: 3, startAt: { from: 0, to: 0.9 }, seed }), () => 100)
        .filter((r) => r.warmup)
        .map((r) => `${r.lane}:${r.turn}`);
    expect(firsts(5n)).toEqual(firsts(5n));
    const kinds = new Set([1n, 2n, 3n, 4n, 5n, 6n].map((s) => firsts(s).join(",")));
    expect(kinds.size).toBeGreaterThan(1);
  });
});
