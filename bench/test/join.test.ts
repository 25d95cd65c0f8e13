/**
 * The harness's parsing and joining code, on hand-made truth/details lines whose errors are worked out by hand
 * in the comments. Run with `bun test bench/test/` (not part of `npm test`: bench/ is not shipped).
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { joinDetails, parseDetails, parseJsonl, parseTruth, truthFigures } from "../lib/join.ts";
import { renderTable } from "../lib/report.ts";
import { percentile, spread } from "../lib/stats.ts";

const fixture = (name: string) => readFileSync(join(import.meta.dir, "fixtures", name), "utf8");
const truth = parseTruth(fixture("truth.jsonl"));
const details = parseDetails(fixture("details.jsonl"));
const close = (actual: number[], expected: number[]) => {
  expect(actual.length).toBe(expected.length);
  for (const [i, v] of actual.entries()) expect(v).toBeCloseTo(expected[i]!, 9);
};

describe("parsing", () => {
  test("truth: snake_case fields, null request_id kept, a torn last line skipped", () => {
    expect(truth.map((t) => t.requestId)).toEqual([null, "r-0-0", "r-0-1", "r-0-4", "r-0-9"]);
    expect(truth[2]!.eventsTokens).toEqual([1, 3, 5]);
    expect(truth[1]!.receivedMs).toBe(1000.3);
  });

  test("details: fields and failure kinds", () => {
    expect(details).toHaveLength(5);
    expect(details[3]).toMatchObject({ requestId: "r-0-3", ok: false, failureKind: "http", cachedTokens: -1 });
    expect(details[1]!.itlMs).toEqual([20.25, 20.25, 20.25, 20.25]);
  });

  test("a bad line in the middle is an error naming the line; a missing field too", () => {
    expect(() => parseJsonl('{"a":1}\nnot json\n{"b":2}\n{"c":3}\n', "x")).toThrow("x:2: not JSON");
    expect(() =>
      parseTruth(
        '{"request_id":"a","rid":"a","received_ms":"soon","prompt_tokens":1,"cached_tokens":0,"completion_tokens":1,"events_ms":[1],"events_tokens":[1]}\n',
      ),
    ).toThrow('"received_ms" is not a number');
    expect(() =>
      parseTruth(
        '{"request_id":"a","rid":"a","received_ms":1,"prompt_tokens":1,"cached_tokens":0,"completion_tokens":1,"events_ms":[1,2],"events_tokens":[1]}\n',
      ),
    ).toThrow("differ in length");
    expect(() => parseDetails('{"request_id":7}\n')).toThrow('"request_id" is not a string');
  });
});

describe("joining details with truth on request_id", () => {
  const r = joinDetails(details, truth);

  test("counts: failed requests skipped, unknown ids unmatched, inconsistent token counts mismatched", () => {
    // r-0-0, r-0-1 join; r-0-2 has no truth; r-0-3 failed; r-0-4 has 1 ITL sample for 2 truth gaps.
    expect(r).toMatchObject({ details: 5, ok: 4, joined: 3, unmatched: 1, mismatched: 1 });
  });

  test("TTFT error = client receive of the first token event - mock write time", () => {
    // A: 1000 + 20.2 - 1020 = 0.2. B: 2000 + 20.5 - 2020 = 0.5. E (mismatched) adds nothing.
    close(r.ttftErrorMs, [0.2, 0.5]);
  });

  test("event delays rebuilt from ttft + cumulative ITL, per token event", () => {
    // A: 1020.2/1040.3/1060.1 vs 1020/1040/1060. B (2 tokens per event): 2020.5/2061.0/2101.5 vs 2020/2060/2101.
    close(r.eventDelayMs, [0.2, 0.3, 0.1, 0.5, 1.0, 0.5]);
  });

  test("ITL error = client gap - mock gap, spread over the event's tokens like the ITL itself", () => {
    // A: 20.1-20 = 0.1, 19.8-20 = -0.2. B: (41-40)/2... i.e. (1.0-0.5)/2 twice, then (0.5-1.0)/2 twice.
    close(r.itlErrorMs, [0.1, -0.2, 0.25, 0.25, -0.25, -0.25]);
  });

  test("send delay = mock receipt - client send stamp", () => {
    close(r.sendDelayMs, [0.3, 0.4, 0]);
  });

  test("steady delays: only events written while every joined stream was between its first and last event", () => {
    // A and B do not overlap in time: no steady state at all.
    expect(r.steadyDelayMs).toEqual([]);
    const line = (id: string, eventsMs: number[]) =>
      JSON.stringify({
        request_id: id,
        rid: id,
        received_ms: 0,
        prompt_tokens: 1,
        cached_tokens: 0,
        completion_tokens: eventsMs.length,
        events_ms: eventsMs,
        events_tokens: eventsMs.map((_, i) => i + 1),
      });
    const detail = (id: string, ttftMs: number, itlMs: number[]) =>
      JSON.stringify({
        request_id: id,
        pct: 0,
        index: 0,
        ok: true,
        failure_kind: null,
        start_epoch_ms: 0,
        ttft_ms: ttftMs,
        latency_ms: 0,
        output_len: 0,
        cached_tokens: 0,
        itl_ms: itlMs,
      });
    // P: events 10, 20, 30, 40; Q: 25, 35, 45. Steady window (25, 40): P's 30 (delay 0.3), Q's 35 (delay 0.7).
    const t2 = parseTruth([line("p", [10, 20, 30, 40]), line("q", [25, 35, 45])].join("\n"));
    const d2 = parseDetails([detail("p", 10.1, [10.1, 10.1, 10.1]), detail("q", 25.5, [10.2, 10.2])].join("\n"));
    const s = joinDetails(d2, t2);
    close(s.eventDelayMs, [0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 0.9]);
    close(s.steadyDelayMs, [0.3, 0.7]);
    const f = truthFigures(t2, 10);
    close(f.steadyLatenessMs, [0, 0]);
    expect(f.steadyEventRatePerS).toBeCloseTo(2 / 0.015, 6);
    expect(truthFigures(truth, 20).steadyEventRatePerS).toBeNaN();
  });
});

describe("server-side figures from the truth alone", () => {
  test("TTFT, ITL, lateness against the schedule, event rate", () => {
    const f = truthFigures(truth, 20);
    // Lines with token events: warm, A, B, E; the disconnect has none.
    expect(f.requests).toBe(5);
    expect(f.events).toBe(1 + 3 + 3 + 3);
    close(f.serverTtftMs, [5, 19.7, 19.6, 20]);
    // B's gaps carry 2 tokens each: 40/2 twice, 41/2 twice.
    close(f.serverItlMs, [20, 20, 20, 20, 20.5, 20.5, 20, 20]);
    // B's third event (token 5) was due at 2020 + 4 * 20 = 2100 and came at 2101.
    close(f.mockLatenessMs, [0, 0, 0, 1, 0, 0]);
    expect(f.firstReceivedMs).toBe(900);
    expect(f.lastEventMs).toBe(3060);
    expect(f.eventRatePerS).toBeCloseTo(10 / 2.16, 9);
  });
});

describe("stats and tables", () => {
  test("percentiles interpolate linearly, as numpy", () => {
    expect(percentile([1, 2, 3, 4], 99)).toBeCloseTo(3.97, 12);
    expect(percentile([4, 1, 3, 2], 50)).toBe(2.5);
    expect(percentile([], 50)).toBeNaN();
    expect(spread([3, 1, 2])).toEqual({ count: 3, p50: 2, p99: 2.98, max: 3 });
  });

  test("Markdown tables escape pipes", () => {
    expect(renderTable(["a", "b"], [["1 | 2", "x"]])).toBe("| a | b |\n|---|---|\n| 1 \\| 2 | x |");
  });
});
