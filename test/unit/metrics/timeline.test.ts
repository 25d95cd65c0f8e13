import { describe, expect, test } from "bun:test";
import type { RequestRecord } from "../../../src/schema/record.ts";
import { steadyState } from "../../../src/metrics/steady-state.ts";
import { bucketWidthMs, buildTimeline, MAX_BUCKETS, timelineData, unpackTimeline } from "../../../src/metrics/timeline.ts";
import { decodeSeries, encodeSeries, SERIES_NAMES, SERIES_UNITS } from "../../../src/metrics/timeline-codec.ts";
import { formatJsonl } from "../../../src/report/jsonl.ts";

const T0 = 10_000;

/** A request sent at startMs: first token after ttftMs, then `gaps` equal gaps up to its end at startMs + e2eMs. */
function rec(index: number, startMs: number, ttftMs: number, e2eMs: number, gaps: number, cachedTokens = 0): RequestRecord {
  const itl = new Float64Array(gaps).fill((e2eMs - ttftMs) / gaps);
  return {
    index,
    ok: true,
    failureKind: null,
    failureMessage: "",
    httpStatus: 200,
    promptLen: 100,
    intendedMs: startMs,
    startMs,
    firstTokenMs: startMs + ttftMs,
    lastEventMs: startMs + e2eMs,
    ttftMs,
    latencyMs: e2eMs,
    outputLen: gaps + 1,
    cachedTokens,
    cachedDeviceTokens: -1,
    cachedHostTokens: -1,
    cachedStorageTokens: -1,
    itlMs: itl,
    tokenEvents: gaps + 1,
    finishReason: "length",
    generatedText: "",
  };
}

/**
 * A run with known phases: arrivals every 50 ms under --max-concurrency 8, each request 1 s long (TTFT 100 + i ms,
 * then 9 equal gaps). Ramp: 8 requests sent 50 ms apart (in flight 1..8 by 350 ms). Plateau: every later request
 * waits for a slot and goes the moment one frees, so 8 stay in flight. Drain: the last 8 end 50 ms apart from 5 s.
 */
function phasedRun(n = 40, cap = 8) {
  const records: RequestRecord[] = [];
  const tokens: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = Math.max(i * 50, i >= cap ? records[i - cap]!.lastEventMs - T0 : 0);
    const r = rec(i, T0 + start, 100 + i, 1000, 9, i < 20 ? 90 : 40);
    records.push(r);
    let t = r.firstTokenMs;
    tokens.push(t);
    for (const g of r.itlMs) {
      t = Math.min(t + g, r.lastEventMs);
      tokens.push(t);
    }
  }
  return { records, tokens };
}

describe("steady-state window", () => {
  test("a ramp, a plateau and a drain: the window is the plateau at >= 80 % of the peak, its metrics over the requests sent in it", () => {
    const { records, tokens } = phasedRun();
    const s = steadyState(records)!;
    // 7 of 8 in flight (ceil(0.8 x 8)) from the 7th send (300 ms) until the drain's second end (5050 ms).
    expect(s.peak_in_flight).toBe(8);
    expect(s.min_in_flight).toBe(7);
    expect(s.start_s).toBeCloseTo(0.3, 9);
    expect(s.end_s).toBeCloseTo(5.05, 9);
    expect(s.duration_s).toBeCloseTo(4.75, 9);
    expect(s.mean_in_flight).toBeCloseTo((7 * 50 + 8 * 4650 + 7 * 50) / 4750, 9);
    // Sent inside: requests 6..39, TTFT 106..139 ms.
    expect(s.requests).toBe(34);
    expect(s.mean_ttft_ms).toBeCloseTo(100 + (6 + 39) / 2, 9);
    expect(s.p99_ttft_ms).toBeCloseTo(138 + 0.67, 6); // numpy's linear: index 33 x 0.99 = 32.67
    expect(s.mean_e2e_latency_ms).toBeCloseTo(1000, 9);
    const gaps = records.slice(6).flatMap((r) => [...r.itlMs]);
    expect(s.mean_itl_ms).toBeCloseTo(gaps.reduce((a, b) => a + b, 0) / gaps.length, 9);
    // Ended inside: generations 0-3 (32) and the drain's first two.
    expect(s.request_throughput).toBeCloseTo(34 / 4.75, 9);
    const inside = tokens.filter((t) => t >= T0 + 300 && t <= T0 + 5050).length;
    expect(inside).toBeLessThan(tokens.length);
    expect(s.output_throughput).toBeCloseTo(inside / 4.75, 9);
    // The window's throughput is above the whole line's, which counts the ramp and the drain.
    expect(s.output_throughput).toBeGreaterThan(tokens.length / 5.35);
  });

  test("a slot handed over within 5 ms does not end the window; a longer gap does", () => {
    // Two in flight at most; the second pair starts 2 ms (then 20 ms) after the first pair ends.
    const pair = (gapMs: number) => [
      rec(0, T0, 10, 100, 4),
      rec(1, T0, 10, 100, 4),
      rec(2, T0 + 100 + gapMs, 10, 100, 4),
      rec(3, T0 + 100 + gapMs, 10, 100, 4),
    ];
    const bridged = steadyState(pair(2))!;
    expect(bridged.start_s).toBe(0);
    expect(bridged.end_s).toBeCloseTo(0.202, 9);
    expect(bridged.requests).toBe(4);
    const broken = steadyState(pair(20))!;
    expect(broken.duration_s).toBeCloseTo(0.1, 9);
    expect(broken.requests).toBe(2);
  });

  test("nothing sent: no window", () => {
    expect(steadyState([])).toBeNull();
  });
});

describe("timeline", () => {
  test("buckets of a 1-2-5 width, at most 120; every request, token and TTFT counted once, in the bucket of its time", () => {
    const { records, tokens } = phasedRun();
    const t = unpackTimeline(buildTimeline(records)!);
    // 5.35 s / 120 = 44.6 ms: 50 ms buckets, 107 of them.
    expect(t.bucket_s).toBe(0.05);
    expect(t.started.length).toBe(107);
    for (const key of ["finished", "in_flight", "output_tokens", "ttft_ms", "itl_ms", "cached_pct"] as const) expect(t[key].length).toBe(107);
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    expect(sum(t.started)).toBe(40);
    expect(sum(t.finished)).toBe(40);
    expect(sum(t.output_tokens)).toBe(tokens.length);
    // The ramp: one more in flight every 50 ms; the plateau: 8; a bucket where no first token came has no TTFT.
    expect(t.in_flight.slice(0, 8)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(t.in_flight[50]).toBe(8);
    expect(t.started.slice(0, 9)).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 0]);
    expect(t.ttft_ms[2]).toBe(100); // request 0's first token at 100 ms
    expect(t.ttft_ms[0]).toBeNull();
    // Requests 0-19 found 90 of their 100 prompt tokens cached, the later ones 40.
    expect(t.cached_pct[0]).toBe(90);
    expect(t.cached_pct[80]).toBe(40); // request 32, sent at 4000 ms
    expect(t.cached_pct[10]).toBeNull(); // nothing sent in 500-550 ms
  });

  test("the width grows with the duration so that no line takes more than 120 buckets", () => {
    for (const ms of [0.5, 1, 119, 121, 999, 6000, 60_000, 3_600_000, 123_456_789]) {
      const w = bucketWidthMs(ms);
      expect(Math.ceil(ms / w)).toBeLessThanOrEqual(MAX_BUCKETS);
      expect(Math.ceil(ms / w)).toBeGreaterThan(MAX_BUCKETS / 5 - 1);
      expect(String(w / 10 ** Math.floor(Math.log10(w) + 1e-9))[0]).toMatch(/[125]/);
    }
    expect(buildTimeline([])).toBeNull();
  });

  test("what 120 buckets cost: at most 2 KB for a dense line (measured, pinned against growth), every series read back on its grid", () => {
    const size = (records: RequestRecord[]) => {
      const t = buildTimeline(records)!;
      expect(t.buckets).toBe(120);
      // What was written is what was measured, to its series' unit (3 significant digits for the means).
      const back = unpackTimeline(t),
        full = timelineData(records)!;
      for (const name of SERIES_NAMES) {
        expect(back[name].length).toBe(120);
        for (const [k, v] of back[name].entries()) {
          const exact = full[name][k]!;
          if (exact === null) {
            expect(v).toBeNull();
            continue;
          }
          expect(Math.abs(v! - exact)).toBeLessThanOrEqual(Math.max(SERIES_UNITS[name] / 2, Math.abs(exact) * 5e-3) + 1e-9);
        }
      }
      // As the line is written (Python's json.dumps separators, ", " and ": ").
      return { timeline: formatJsonl({ timeline: t }).length, steady: formatJsonl({ steady_state: steadyState(records) }).length };
    };
    // Light: 120 requests over 60 s, 2 in flight, 32 tokens each.
    const light: RequestRecord[] = [];
    for (let i = 0; i < 120; i++) light.push({ ...rec(i, T0 + i * 495, 40 + (i % 7), 990, 31, 3584), promptLen: 4096 });
    // Dense: 3000 requests over 60 s, ~65 in flight, 256 tokens each (the widest numbers per bucket), 4096-token
    // prompts of which 3584 to 4095 cached (a share that changes in every bucket).
    const dense: RequestRecord[] = [];
    for (let i = 0; i < 3000; i++) dense.push({ ...rec(i, T0 + i * 19.5, 150 + (i % 37), 1250 + (i % 101), 255, 3584 + ((i * 37) % 512)), promptLen: 4096 });
    const l = size(light),
      d = size(dense);
    console.log(`120 buckets: light line timeline ${l.timeline} B + steady_state ${l.steady} B; dense line ${d.timeline} B + ${d.steady} B`);
    expect(l.timeline).toBeLessThanOrEqual(2048);
    expect(d.timeline).toBeLessThanOrEqual(2048);
    expect(d.steady).toBeLessThanOrEqual(480);
  });
});

describe("timeline codec", () => {
  test("a series reads back as written: nulls, negative steps, large values, on the unit's grid", () => {
    const values = [0, 1, 1, null, 2, -5, 40_000, null, null, 3, 1_234_567, 0];
    const text = encodeSeries(values, 1);
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeSeries(text, 1)).toEqual(values);
    // A steady series costs one character a bucket; null is one character.
    expect(encodeSeries([7, 7, 7, null, 7], 1).length).toBe(5);
    expect(decodeSeries(encodeSeries([66.37, 0.3, null, 4.449, 12_345.6], 0.1), 0.1)).toEqual([66.4, 0.3, null, 4.4, 12_300]);
    expect(decodeSeries(encodeSeries([165.4, 4.437, 0.0123, null], 0.01), 0.01)).toEqual([165, 4.44, 0.01, null]);
    expect(decodeSeries("", 1)).toEqual([]);
    expect(() => decodeSeries("AB=", 1)).toThrow(/'=' is not a base64url character/);
  });

  test("a written timeline whose series disagree with its bucket count is refused", () => {
    const t = buildTimeline(phasedRun().records)!;
    expect(() => unpackTimeline({ ...t, buckets: t.buckets + 1 })).toThrow(/timeline started: 107 values for 108 buckets/);
  });
});
