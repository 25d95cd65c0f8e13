/**
 * The session-level keys of an agentic replay's line, from its measured requests (warm-ups are not among them) and
 * each one's checked cache range. A session is one replay instance of a trace (its tree: the root and its
 * subagents). Pure.
 *
 * - jct_ms: a session's job completion time, its makespan: first send to last end of its measured requests;
 * - jobs_per_hour: sessions whose every request ended, over the replay's measured duration;
 * - session_hit_ratio / session_ceiling_hit_ratio: per session, cached tokens reported (resp. the most an infinite
 *   cache could give, a sibling still in prefill counted: what no server beats) over the prompt tokens of its
 *   requests that reported cached tokens: the distribution over sessions;
 * - turns_per_session: requests per session (every chain's);
 * - subagent_concurrency: per session, the most chains (root included) with a request in flight at once;
 * - ttft_by_context_tokens: median TTFT by prompt length, in doubling bins from 8k tokens.
 */
import { npMean, npMedian, npPercentile } from "./stats.ts";
import type { RequestRecord } from "../schema/record.ts";
import type { ScheduledRequest } from "../workload/agentic/session-schedule.ts";
import type { CheckedRequest } from "./replay-check.ts";

interface Spread {
  mean: number;
  p50: number;
  p90: number;
  max: number;
}

interface ContextBin {
  from_tokens: number;
  /** Null: no upper end (the last bin). */
  to_tokens: number | null;
  requests: number;
  median_ttft_ms: number | null;
}

export interface AgenticKeys {
  jct_ms: Spread | null;
  jobs_per_hour: number | null;
  session_hit_ratio: Spread | null;
  session_ceiling_hit_ratio: Spread | null;
  turns_per_session: Spread | null;
  subagent_concurrency: Spread | null;
  ttft_by_context_tokens: ContextBin[];
}

/** Bin edges of the prompt length, tokens: [0, 8k), [8k, 16k), ... [128k, -). */
const CONTEXT_EDGES = [0, 8192, 16384, 32768, 65536, 131072] as const;

function spread(values: readonly number[]): Spread | null {
  if (values.length === 0) return null;
  return { mean: npMean(values), p50: npPercentile(values, 50), p90: npPercentile(values, 90), max: values.reduce((a, v) => Math.max(a, v), -Infinity) };
}

const endOf = (r: RequestRecord): number => (r.lastEventMs > 0 ? r.lastEventMs : r.startMs + r.latencyMs);

/** The most chains of one session with a request in flight at once. */
function chainsInFlight(list: readonly { rec: RequestRecord; chain: string }[]): number {
  const events = list.flatMap(({ rec, chain }) => [
    { at: rec.startMs, chain, d: 1 },
    { at: endOf(rec), chain, d: -1 },
  ]);
  // Ends before starts at one instant: a turn that follows its predecessor's end does not overlap it.
  events.sort((a, b) => a.at - b.at || a.d - b.d);
  const open = new Map<string, number>();
  let most = 0;
  for (const e of events) {
    open.set(e.chain, (open.get(e.chain) ?? 0) + e.d);
    if (open.get(e.chain) === 0) open.delete(e.chain);
    most = Math.max(most, open.size);
  }
  return most;
}

export function agenticKeys(
  records: readonly RequestRecord[],
  requests: ReadonlyMap<number, ScheduledRequest>,
  checked: ReadonlyMap<number, CheckedRequest>,
  plannedPerSession: ReadonlyMap<number, number>,
  durationS: number,
): AgenticKeys {
  const bySession = new Map<number, { rec: RequestRecord; chain: string }[]>();
  for (const rec of records) {
    const r = requests.get(rec.index);
    if (r === undefined) continue;
    const list = bySession.get(r.instance);
    if (list === undefined) bySession.set(r.instance, [{ rec, chain: r.agentPath }]);
    else list.push({ rec, chain: r.agentPath });
  }
  const jct: number[] = [];
  const hit: number[] = [];
  const ceiling: number[] = [];
  const turns: number[] = [];
  const concurrency: number[] = [];
  let completed = 0;
  for (const [instance, list] of bySession) {
    const first = list.reduce((a, x) => Math.min(a, x.rec.startMs), Infinity);
    const last = list.reduce((a, x) => Math.max(a, endOf(x.rec)), -Infinity);
    jct.push(last - first);
    turns.push(list.length);
    concurrency.push(chainsInFlight(list));
    if (list.length === plannedPerSession.get(instance)) completed++;
    let prompt = 0;
    let observed = 0;
    let ceilingTokens = 0;
    for (const { rec } of list) {
      const c = checked.get(rec.index);
      if (!rec.ok || rec.cachedTokens < 0 || c === undefined) continue;
      prompt += rec.promptLen;
      observed += rec.cachedTokens;
      ceilingTokens += c.ceiling;
    }
    if (prompt > 0) {
      hit.push(observed / prompt);
      ceiling.push(ceilingTokens / prompt);
    }
  }
  return {
    jct_ms: spread(jct),
    jobs_per_hour: durationS > 0 && bySession.size > 0 ? completed / (durationS / 3600) : null,
    session_hit_ratio: spread(hit),
    session_ceiling_hit_ratio: spread(ceiling),
    turns_per_session: spread(turns),
    subagent_concurrency: spread(concurrency),
    ttft_by_context_tokens: ttftByContext(records),
  };
}

function ttftByContext(records: readonly RequestRecord[]): ContextBin[] {
  return CONTEXT_EDGES.map((from, i) => {
    const to = CONTEXT_EDGES[i + 1] ?? null;
    const ttft = records.filter((r) => r.ok && r.promptLen >= from && (to === null || r.promptLen < to)).map((r) => r.ttftMs);
    return { from_tokens: from, to_tokens: to, requests: ttft.length, median_ttft_ms: ttft.length > 0 ? npMedian(ttft) : null };
  });
}
