/**
 * An agentic replay's swim lanes: one row per session (replay instance), each request a bar from its send to its
 * last byte on one time axis (seconds from the run's first send), coloured by its cache hit ratio. Within a row the
 * root agent's chain is sub-row 0 and the subagents' chains are packed below it: a chain takes the first sub-row
 * free when it starts, so chains that ran at once sit on different sub-rows and chains that followed each other
 * share one. Pure.
 */
import type { AgenticRequest } from "./agentic-details.ts";

interface LaneRow {
  session: number;
  traceId: string;
  /** Sub-rows: 1 (the root alone) plus as many as the subagents needed side by side. */
  slots: number;
}

interface LaneBar {
  /** Index into rows. */
  row: number;
  slot: number;
  fromS: number;
  toS: number;
  /** cached / prompt tokens; null where the server reported none or the request failed. */
  hitRatio: number | null;
  agentPath: string;
  turn: number;
}

export interface SwimLanes {
  rows: LaneRow[];
  bars: LaneBar[];
  /** The last end, seconds from the first send. */
  spanS: number;
}

const endMs = (r: AgenticRequest): number => r.startEpochMs + r.latencyMs;

/** A request's cache hit ratio, or null when it has none to show. */
function hitRatioOf(r: AgenticRequest): number | null {
  if (!r.ok || r.cachedTokens < 0 || r.promptLen === 0) return null;
  return r.cachedTokens / r.promptLen;
}

/** Each subagent chain's sub-row (from 1): the first whose last chain ended by this one's first send. */
function packChains(chains: ReadonlyMap<string, { fromMs: number; toMs: number }>): Map<string, number> {
  const slotOf = new Map<string, number>();
  const freeAtMs: number[] = [];
  const order = [...chains.entries()].filter(([path]) => path !== "").sort((a, b) => a[1].fromMs - b[1].fromMs || a[0].localeCompare(b[0]));
  for (const [path, span] of order) {
    let k = freeAtMs.findIndex((t) => t <= span.fromMs);
    if (k < 0) k = freeAtMs.push(0) - 1;
    freeAtMs[k] = span.toMs;
    slotOf.set(path, k + 1);
  }
  slotOf.set("", 0);
  return slotOf;
}

export function swimLanes(requests: readonly AgenticRequest[]): SwimLanes {
  if (requests.length === 0) return { rows: [], bars: [], spanS: 0 };
  const t0Ms = requests.reduce((a, r) => Math.min(a, r.startEpochMs), Infinity);
  const bySession = new Map<number, AgenticRequest[]>();
  for (const r of requests) bySession.set(r.session, [...(bySession.get(r.session) ?? []), r]);
  const rows: LaneRow[] = [];
  const bars: LaneBar[] = [];
  for (const session of [...bySession.keys()].sort((a, b) => a - b)) {
    const list = bySession.get(session)!;
    const chains = new Map<string, { fromMs: number; toMs: number }>();
    for (const r of list) {
      const c = chains.get(r.agentPath);
      chains.set(r.agentPath, { fromMs: Math.min(c?.fromMs ?? Infinity, r.startEpochMs), toMs: Math.max(c?.toMs ?? -Infinity, endMs(r)) });
    }
    const slotOf = packChains(chains);
    const row = rows.length;
    rows.push({ session, traceId: list[0]!.traceId, slots: Math.max(...slotOf.values()) + 1 });
    for (const r of [...list].sort((a, b) => a.startEpochMs - b.startEpochMs)) {
      bars.push({
        row,
        slot: slotOf.get(r.agentPath)!,
        fromS: (r.startEpochMs - t0Ms) / 1000,
        toS: (endMs(r) - t0Ms) / 1000,
        hitRatio: hitRatioOf(r),
        agentPath: r.agentPath,
        turn: r.turn,
      });
    }
  }
  return { rows, bars, spanS: bars.reduce((a, b) => Math.max(a, b.toS), 0) };
}
