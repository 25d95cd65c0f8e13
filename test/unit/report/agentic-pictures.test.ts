/**
 * The agentic pictures' data, on a small synthetic replay worked by hand: two sessions, the second with three
 * subagent chains (two at once, one after them). The swim lane puts the root on sub-row 0, packs the chains that
 * overlap onto sub-rows 1 and 2 and the later one back onto 1; each bar spans send to last byte in seconds from the
 * first send, coloured by cached/prompt. Per session: JCT first send to last end, hit ratio and ceiling over the
 * prompts that reported cached tokens. The details reader keeps only the run's lines and counts the broken ones.
 */
import { describe, expect, test } from "bun:test";
import type { AgenticRequest } from "../../../src/report/agentic-details.ts";
import { parseAgenticDetails } from "../../../src/report/agentic-details.ts";
import { swimLanes } from "../../../src/report/agentic-lanes.ts";
import { sessionFigures } from "../../../src/report/agentic-sessions.ts";
import { agenticPictures } from "../../../src/report/agentic-sections.ts";

const T0 = 1_700_000_000_000;
let n = 0;
function req(
  session: number,
  agentPath: string,
  turn: number,
  fromMs: number,
  latencyMs: number,
  promptLen: number,
  cached: number,
  ceiling: number,
): AgenticRequest {
  return {
    requestId: `run-replay-${n++}`,
    ok: true,
    session,
    traceId: session === 0 ? "trace_a" : "trace_b",
    agentPath,
    turn,
    startEpochMs: T0 + fromMs,
    latencyMs,
    ttftMs: 10 + promptLen / 100,
    promptLen,
    cachedTokens: cached,
    ceilingTokens: ceiling,
  };
}

// Session 1's chains: agent_001 [1500, 2500], agent_002 [1600, 2000] (at once: two sub-rows), agent_003 [3000, 3200]
// (after both: back on sub-row 1). Session 0 is the root alone. Listed out of order on purpose.
const REQUESTS: AgenticRequest[] = [
  req(1, "agent_003", 0, 3000, 200, 400, 100, 100),
  req(0, "", 0, 0, 1000, 1000, 0, 0),
  req(0, "", 1, 1200, 800, 2000, 1000, 1000),
  req(1, "", 0, 500, 500, 1000, 500, 500),
  req(1, "agent_001", 0, 1500, 1000, 800, 200, 400),
  req(1, "agent_002", 0, 1600, 400, 200, 0, 100),
  { ...req(1, "", 1, 3500, 500, 600, -1, 0), ok: false, ttftMs: null },
];

describe("swimLanes", () => {
  const lanes = swimLanes(REQUESTS);
  test("one row per session, the root alone on sub-row 0, overlapping subagents on sub-rows 1 and 2", () => {
    expect(lanes.rows).toEqual([
      { session: 0, traceId: "trace_a", slots: 1 },
      { session: 1, traceId: "trace_b", slots: 3 },
    ]);
    const slot = (path: string) => [...new Set(lanes.bars.filter((b) => b.row === 1 && b.agentPath === path).map((b) => b.slot))];
    expect([slot(""), slot("agent_001"), slot("agent_002"), slot("agent_003")]).toEqual([[0], [1], [2], [1]]);
  });

  test("bars in seconds from the first send, coloured by cached / prompt (null for a failed request)", () => {
    const bar = (session: number, path: string, turn: number) =>
      lanes.bars.find((b) => lanes.rows[b.row]!.session === session && b.agentPath === path && b.turn === turn)!;
    expect(bar(0, "", 1)).toMatchObject({ fromS: 1.2, toS: 2, hitRatio: 0.5 });
    expect(bar(1, "agent_001", 0)).toMatchObject({ fromS: 1.5, toS: 2.5, hitRatio: 0.25 });
    expect(bar(1, "agent_002", 0)).toMatchObject({ fromS: 1.6, toS: 2, hitRatio: 0 });
    expect(bar(1, "", 1)).toMatchObject({ fromS: 3.5, toS: 4, hitRatio: null });
    expect(lanes.spanS).toBe(4);
    expect(lanes.bars).toHaveLength(REQUESTS.length);
  });

  test("no requests: no rows", () => {
    expect(swimLanes([])).toEqual({ rows: [], bars: [], spanS: 0 });
  });
});

describe("sessionFigures", () => {
  test("JCT first send to last end; hit ratio and ceiling over the prompts that reported cached tokens", () => {
    const [s0, s1] = sessionFigures(REQUESTS);
    // Session 0: 0 -> 2000 ms; cached 1000 of 3000 prompt tokens; ceiling the same.
    expect(s0).toEqual({ session: 0, traceId: "trace_a", requests: 2, chains: 1, jctMs: 2000, hitRatio: 1000 / 3000, ceilingHitRatio: 1000 / 3000 });
    // Session 1: 500 -> 4000 ms; the failed request left out: cached 500+200+0+100 = 800 of 1000+800+200+400 = 2400,
    // ceiling 500+400+100+100 = 1100 of 2400.
    expect(s1).toEqual({ session: 1, traceId: "trace_b", requests: 5, chains: 4, jctMs: 3500, hitRatio: 800 / 2400, ceilingHitRatio: 1100 / 2400 });
  });
});

describe("agenticPictures", () => {
  test("a lane per run, the JCT CDF, the hit-vs-ceiling points with the diagonal, TTFT against prompt length", () => {
    const p = agenticPictures([{ label: "r", series: 0, requests: REQUESTS, bins: [{ from_tokens: 512, to_tokens: 2048, requests: 5, median_ttft_ms: 20 }] }]);
    expect(p.lanes).toHaveLength(1);
    expect(p.lanes[0]!.rows).toEqual([
      ["#0 trace_a", 1],
      ["#1 trace_b", 3],
    ]);
    const [jct, hit, ttft] = p.sections;
    expect(jct!.chart.datasets[0]!.data).toEqual([
      { x: 2, y: 0.5 },
      { x: 3.5, y: 1 },
    ]);
    expect(hit!.chart.datasets[0]!.data).toEqual([
      { x: 1000 / 3000, y: 1000 / 3000 },
      { x: 1100 / 2400, y: 800 / 2400 },
    ]);
    expect(hit!.chart.datasets[1]!.style).toBe("reference");
    // Six requests answered (the failed one has no TTFT), by prompt length; the bin's median at sqrt(512 * 2048).
    expect(ttft!.chart.datasets[0]!.data.map((d) => d.x)).toEqual([200, 400, 800, 1000, 1000, 2000]);
    expect(ttft!.chart.datasets[1]!.data).toEqual([{ x: 1024, y: 20 }]);
    expect(agenticPictures([])).toEqual({ lanes: [], sections: [] });
  });
});

describe("parseAgenticDetails", () => {
  test("the run's lines only; a line missing a field, or not JSON, counted and left out", () => {
    const good = {
      request_id: "abc-replay-0",
      ok: true,
      session: 0,
      trace_id: "t",
      agent_path: "",
      turn: 0,
      start_epoch_ms: 5,
      latency_ms: 2,
      ttft_ms: 1,
      prompt_len: 10,
      cached_tokens: 4,
    };
    const text = [
      JSON.stringify(good),
      JSON.stringify({ ...good, request_id: "other-replay-0" }),
      JSON.stringify({ ...good, request_id: "abc-replay-1", session: "0" }),
      "{not json",
      "",
    ].join("\n");
    const r = parseAgenticDetails(text, "abc");
    expect(r.invalid).toBe(2);
    expect(r.requests).toEqual([
      {
        requestId: "abc-replay-0",
        ok: true,
        session: 0,
        traceId: "t",
        agentPath: "",
        turn: 0,
        startEpochMs: 5,
        latencyMs: 2,
        ttftMs: 1,
        promptLen: 10,
        cachedTokens: 4,
        ceilingTokens: null,
      },
    ]);
  });
});
