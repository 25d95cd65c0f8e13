/**
 * Per session of an agentic replay, from its requests: its job completion time (first send to last byte, as the
 * line's jct_ms) and its cache hit ratio beside an infinite cache's (cached, resp. ceiling, tokens over the prompt
 * tokens of its requests that reported cached tokens, as the line's session_hit_ratio). Pure.
 */
import type { AgenticRequest } from "./agentic-details.ts";

export interface SessionFigures {
  session: number;
  traceId: string;
  requests: number;
  /** Distinct chains: the root and each subagent. */
  chains: number;
  jctMs: number;
  /** Null: no request of it reported cached tokens. */
  hitRatio: number | null;
  ceilingHitRatio: number | null;
}

export function sessionFigures(requests: readonly AgenticRequest[]): SessionFigures[] {
  const bySession = new Map<number, AgenticRequest[]>();
  for (const r of requests) bySession.set(r.session, [...(bySession.get(r.session) ?? []), r]);
  return [...bySession.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([session, list]) => {
      const fromMs = list.reduce((a, r) => Math.min(a, r.startEpochMs), Infinity);
      const toMs = list.reduce((a, r) => Math.max(a, r.startEpochMs + r.latencyMs), -Infinity);
      const reported = list.filter((r) => r.ok && r.cachedTokens >= 0);
      const prompt = reported.reduce((a, r) => a + r.promptLen, 0);
      const ceilingKnown = reported.every((r) => r.ceilingTokens !== null);
      return {
        session,
        traceId: list[0]!.traceId,
        requests: list.length,
        chains: new Set(list.map((r) => r.agentPath)).size,
        jctMs: toMs - fromMs,
        hitRatio: prompt > 0 ? reported.reduce((a, r) => a + r.cachedTokens, 0) / prompt : null,
        ceilingHitRatio: prompt > 0 && ceilingKnown ? reported.reduce((a, r) => a + r.ceilingTokens!, 0) / prompt : null,
      };
    });
}
