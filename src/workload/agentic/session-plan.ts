/**
 * A session tree made flat for the schedule: every chain (the root and each subagent) and every call, with its
 * recorded times on the root's clock, what it follows and which children it waits for. The two readings the trace
 * leaves open are named rules:
 *
 * - spawn rule (when a subagent started, and what its inner `t` counts from):
 *   `result-minus-duration`: the wrapper's `t` is when its result came back (the WEKA tools' builder), so the spawn
 *   is `t - duration_ms/1000` and inner `t` counts from the spawn (kv-cache-tester, agentic-coding-analysis);
 *   `wrapper-start`: the wrapper's `t` is the spawn and inner `t` counts from it (the spec's wording; AIPerf's and
 *   inference-perf's relative reading); `absolute`: inner `t` is root time (SemiAnalysis AgentX corpora) and the
 *   spawn is the child's first call.
 * - join rule (which parent call waits for a child's whole subtree to end): `first-after-end`: the first later call
 *   of the parent sent at or after the child's recorded end (AIPerf's SPAWN_JOIN); `next-call`: the parent's next
 *   call after the wrapper (kv-cache-tester waits for all children); `none`: no call waits. A child no call waits
 *   for runs in the background and holds its session open until it ends.
 *
 * A child's recorded end is its spawn plus `duration_ms` where known (not under `absolute`), else the latest recorded
 * end (`t + api_time`) in its subtree.
 */
import type { AgenticCall, AgenticStep, AgenticTrace } from "./session-tree.ts";

export const SPAWN_RULES = ["result-minus-duration", "wrapper-start", "absolute"] as const;
export type SpawnRule = (typeof SPAWN_RULES)[number];
export const JOIN_RULES = ["first-after-end", "next-call", "none"] as const;
export type JoinRule = (typeof JOIN_RULES)[number];

interface PlannedChain {
  /** `""` for the root, else the agent ids from the root down joined by "/". */
  agentPath: string;
  /** The parent chain's index; -1 for the root. */
  parent: number;
  /** Recorded spawn, root seconds (0 for the root). */
  spawnS: number;
  /** Recorded end of its subtree, root seconds. */
  endS: number;
  /** The parent's call it follows (the last call before the wrapper in the parent chain); -1: none (the parent's start). */
  anchor: number;
  /** Every call of the chain and of its descendants (the subtree whose end a join waits for). */
  subtree: number[];
}

interface PlannedCall {
  /** Index in the plan's calls (unique in the tree: keys the prompt's tail). */
  ordinal: number;
  chain: number;
  /** Place in its chain (0: first). */
  turn: number;
  /** Previous call of the same chain; -1 for its first. */
  prev: number;
  /** Recorded send and end, root seconds (end = send + api_time, or the send where api_time is unknown). */
  startS: number;
  endS: number;
  call: AgenticCall;
  /** Chains whose subtrees this call waits for (the join rule's choice). */
  joins: number[];
}

export interface TreePlan {
  trace: AgenticTrace;
  chains: PlannedChain[];
  calls: PlannedCall[];
  /** Latest recorded end of any call, root seconds. */
  durationS: number;
}

export function planTree(trace: AgenticTrace, spawn: SpawnRule, join: JoinRule): TreePlan {
  const chains: PlannedChain[] = [];
  const calls: PlannedCall[] = [];
  const callEnd = (startS: number, c: AgenticCall) => startS + (c.apiTimeS ?? 0);

  /** Plans one chain; returns its index. `originS`: what its inner `t` counts from (null: absolute root time). */
  const planChain = (steps: AgenticStep[], agentPath: string, parent: number, spawnS: number, originS: number | null, anchor: number): number => {
    const index = chains.length;
    const chain: PlannedChain = { agentPath, parent, spawnS, endS: spawnS, anchor, subtree: [] };
    chains.push(chain);
    let last = -1;
    const children: { chain: number }[] = [];
    for (const step of steps) {
      if (step.kind === "call") {
        const startS = originS === null ? step.tS : originS + step.tS;
        const ordinal = calls.length;
        calls.push({
          ordinal,
          chain: index,
          turn: last < 0 ? 0 : calls[last]!.turn + 1,
          prev: last,
          startS,
          endS: callEnd(startS, step),
          call: step,
          joins: [],
        });
        chain.subtree.push(ordinal);
        last = ordinal;
        continue;
      }
      const path = agentPath === "" ? step.agentId : `${agentPath}/${step.agentId}`;
      const dur = step.durationMs === null ? null : step.durationMs / 1000;
      let childSpawnS: number;
      let childOrigin: number | null;
      if (spawn === "absolute") {
        childSpawnS = firstCallT(step.steps);
        childOrigin = null;
      } else {
        childSpawnS = spawn === "result-minus-duration" && dur !== null ? Math.max(0, step.tS - dur) : step.tS;
        childOrigin = childSpawnS;
      }
      const child = planChain(step.steps, path, index, childSpawnS, childOrigin, last);
      if (dur !== null && spawn !== "absolute") chains[child]!.endS = childSpawnS + dur;
      chain.subtree.push(...chains[child]!.subtree);
      children.push({ chain: child });
    }
    const own = chain.subtree.map((k) => calls[k]!);
    chain.endS = Math.max(chain.endS, ...own.map((c) => c.endS));
    // Joins: a child's waiter is a later call of this chain, after the wrapper in list order (calls are planned
    // depth first, so those are the chain's calls past the child's subtree).
    const mine = own.filter((c) => c.chain === index);
    for (const { chain: child } of children) {
      const past = chains[child]!.subtree.at(-1)!;
      const later = mine.filter((c) => c.ordinal > past);
      const waiter = join === "none" ? undefined : join === "next-call" ? later[0] : later.find((c) => c.startS >= chains[child]!.endS);
      if (waiter !== undefined) waiter.joins.push(child);
    }
    return index;
  };
  planChain(trace.steps, "", -1, 0, 0, -1);
  const durationS = Math.max(...calls.map((c) => c.endS));
  return { trace, chains, calls, durationS };
}

function firstCallT(steps: AgenticStep[]): number {
  for (const s of steps) {
    if (s.kind === "call") return s.tS;
    const inner = firstCallT(s.steps);
    if (Number.isFinite(inner)) return inner;
  }
  return Number.POSITIVE_INFINITY;
}
