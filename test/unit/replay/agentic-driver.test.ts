/**
 * The agentic sessions as a request source under the real dispatcher, on the real clock with a fake server (each
 * answer after a fixed time), as the engine's send drives it: a request goes out at
 * its intended time, the next turn only after the answer it follows, never more than --max-concurrency in flight (a
 * request that waits for a slot keeps its intended time), every end fed back, and an interrupt ends the drive with
 * what had ended. The session-level keys are checked on records made here.
 */
import { describe, expect, test } from "bun:test";
import { nowMs } from "../../../src/client/clock.ts";
import { driveSessions } from "../../../src/replay/agentic-driver.ts";
import { fakePacedSend } from "../../helpers/fake-paced-send.ts";
import { agenticKeys } from "../../../src/metrics/agentic-metrics.ts";
import type { CheckedRequest } from "../../../src/metrics/replay-check.ts";
import type { RequestRecord } from "../../../src/schema/record.ts";
import { SessionSchedule, type ScheduledRequest } from "../../../src/workload/agentic/session-schedule.ts";
import { parseWekaTraces } from "../../../src/workload/agentic/weka-trace.ts";

const call = (t: number, o: Record<string, number> = {}) => ({ type: "n", t, in: 8, out: 1, hash_ids: [1, 2], api_time: 0, ...o });
/** Three root turns 1 s apart (end to start), one subagent of two calls spawned at 0.5 s. */
const TRACE = JSON.stringify({
  id: "t",
  block_size: 4,
  requests: [call(0), { type: "subagent", t: 1.5, agent_id: "a", duration_ms: 1000, requests: [call(0), call(0.5)] }, call(2), call(3)],
});
const corpus = parseWekaTraces("t.json", TRACE);

function record(index: number, intendedMs: number, startMs: number, endMs: number): RequestRecord {
  return {
    index,
    ok: true,
    intendedMs,
    startMs,
    firstTokenMs: startMs + 1,
    lastEventMs: endMs,
    ttftMs: 1,
    latencyMs: endMs - startMs,
    promptLen: 8,
    outputLen: 1,
    cachedTokens: 4,
    failureKind: null,
    failureMessage: "",
  } as unknown as RequestRecord;
}

function drive(o: { answerMs: number; maxConcurrency: number; lanes: number; signal?: AbortSignal }) {
  const sent: { r: ScheduledRequest; at: number; intendedMs: number }[] = [];
  const handed = new Map<number, ScheduledRequest>();
  let inFlight = 0;
  let most = 0;
  // The engine's send without the network: the real dispatcher, each answer a timer.
  const send = fakePacedSend((taken, intendedMs) => {
    const r = handed.get(taken.shape.index)!;
    const at = nowMs();
    sent.push({ r, at, intendedMs });
    most = Math.max(most, ++inFlight);
    return new Promise((resolve) =>
      setTimeout(() => {
        inFlight--;
        resolve(record(r.requestId, intendedMs, at, nowMs()));
      }, o.answerMs),
    );
  }, o.signal);
  const result = driveSessions({
    scheduleAt: (originMs) =>
      new SessionSchedule(corpus, {
        delay: "end-to-start",
        spawn: "result-minus-duration",
        join: "none",
        maxIdleS: null,
        timeScale: 0.02,
        lanes: o.lanes,
        sessions: o.lanes,
        startAt: null,
        seed: 1n,
        originMs,
      }),
    build: (r) => {
      handed.set(r.requestId, r);
      return { body: new Uint8Array(0), shape: { index: r.requestId, promptLen: 8, maxNewTokens: 1 } };
    },
    // Five calls per lane (three root turns, two of the subagent).
    maxRequests: 5 * o.lanes,
    send,
    maxConcurrency: o.maxConcurrency,
    signal: o.signal,
  });
  return { result, sent, most: () => most };
}

describe("driveSessions", () => {
  test("each request at its intended time; the next turn only after the answer it follows", async () => {
    const d = drive({ answerMs: 5, maxConcurrency: 0, lanes: 1 });
    const r = await d.result;
    expect(r.interrupted).toBe(false);
    expect(r.records).toHaveLength(5);
    expect(r.requests.size).toBe(5);
    for (const { r: req, at, intendedMs } of d.sent) {
      // The engine takes each request's intended time from the schedule, not from the free slot.
      expect(intendedMs).toBe(req.intendedMs);
      expect(at).toBeGreaterThanOrEqual(req.intendedMs - 0.01);
      expect(at - req.intendedMs).toBeLessThan(15);
    }
    // Root turns: 1 s (20 ms scaled) after the previous answer, which took 5 ms.
    const root = d.sent.filter((s) => s.r.agentPath === "").map((s) => s.at);
    for (let i = 1; i < root.length; i++) expect(root[i]! - root[i - 1]!).toBeGreaterThanOrEqual(20 + 5 - 1);
    // The subagent runs beside the root.
    expect(d.sent.some((s) => s.r.agentPath === "a")).toBe(true);
  });

  test("--max-concurrency holds the rest; a held request keeps its intended time", async () => {
    const d = drive({ answerMs: 30, maxConcurrency: 1, lanes: 3 });
    const r = await d.result;
    expect(r.records).toHaveLength(15);
    expect(d.most()).toBe(1);
    // Three lanes start at the origin together: two of them waited for the slot (lag ≥ one answer).
    const lags = d.sent.map((s) => s.at - s.intendedMs).sort((a, b) => b - a);
    expect(lags[0]!).toBeGreaterThanOrEqual(29);
    for (const s of d.sent) expect(s.intendedMs).toBe(s.r.intendedMs);
  });

  test("an interrupt ends the drive; nothing new goes out", async () => {
    const stop = new AbortController();
    const d = drive({ answerMs: 5, maxConcurrency: 0, lanes: 1, signal: stop.signal });
    setTimeout(() => stop.abort(), 12);
    const r = await d.result;
    expect(r.interrupted).toBe(true);
    expect(d.sent.length).toBeLessThan(5);
  });
});

describe("agenticKeys", () => {
  test("JCT, turns, chains in flight, hit ratio against the ceiling, per session", () => {
    const req = (requestId: number, instance: number, agentPath: string) => ({ requestId, instance, agentPath }) as ScheduledRequest;
    const requests = new Map([
      [0, req(0, 0, "")],
      [1, req(1, 0, "a")],
      [2, req(2, 0, "")],
      [3, req(3, 1, "")],
    ]);
    // Session 0: 0-10, a 5-20 (overlaps both), 12-30; session 1: 0-40.
    const records = [record(0, 0, 0, 10), record(1, 5, 5, 20), record(2, 12, 12, 30), record(3, 0, 0, 40)];
    const checked = new Map<number, CheckedRequest>(records.map((r) => [r.index, { infinite: 5, ceiling: 6 } as CheckedRequest]));
    const k = agenticKeys(
      records,
      requests,
      checked,
      new Map([
        [0, 3],
        [1, 2],
      ]),
      3.6,
    );
    expect(k.jct_ms).toEqual({ mean: 35, p50: 35, p90: 39, max: 40 });
    expect(k.turns_per_session?.max).toBe(3);
    expect(k.subagent_concurrency).toEqual({ mean: 1.5, p50: 1.5, p90: 1.9, max: 2 });
    expect(k.session_hit_ratio?.mean).toBe(0.5);
    // The ceiling is the most an infinite cache could give (6), not what it certainly gave (5).
    expect(k.session_ceiling_hit_ratio?.mean).toBe(0.75);
    // One session of two complete (session 1 planned 2, ran 1) in 3.6 s: 1000 an hour.
    expect(k.jobs_per_hour).toBeCloseTo(1000, 9);
    expect(k.ttft_by_context_tokens[0]).toEqual({ from_tokens: 0, to_tokens: 8192, requests: 4, median_ttft_ms: 1 });
  });
});
