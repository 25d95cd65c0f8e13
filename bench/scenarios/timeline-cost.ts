/**
 * Timeline cost: what each line's `timeline` and `steady_state` cost. Both are computed from the records after the
 * measurement, never per event; this checks it. The hot path: the same mock trial run by the binary before the
 * timeline (--baseline PATH) and by the current one, interleaved before, after, before, after..., so that the box's
 * load drifts over both alike: client CPU per event over the measured window, event delay p99 and the TTFT and ITL
 * errors (per request, against the mock's truth log), and the whole run's CPU (which includes the summary). The
 * post-measurement cost: buildTimeline and steadyState in this process on synthetic lines of N requests x 256
 * tokens, ~65 in flight over 60 s (the size test's dense line, scaled), the median of 5 runs.
 */
import { cpus, loadavg } from "node:os";
import type { RequestRecord } from "../../src/schema/record.ts";
import { steadyState } from "../../src/metrics/steady-state.ts";
import { buildTimeline } from "../../src/metrics/timeline.ts";
import { formatJsonl } from "../../src/report/jsonl.ts";
import { progress, type ScenarioResult, type TargetCheck } from "../lib/scenario.ts";
import { fmt, percentile } from "../lib/stats.ts";
import { runTrial, type BenchContext, type TrialResult } from "../lib/trial.ts";

const ITL_MS = 20;

/** A request of the synthetic line: sent at startMs, first token after ttftMs, then 255 equal gaps. */
function rec(index: number, startMs: number, ttftMs: number, e2eMs: number): RequestRecord {
  const gaps = 255;
  return {
    index,
    ok: true,
    failureKind: null,
    failureMessage: "",
    httpStatus: 200,
    promptLen: 4096,
    intendedMs: startMs,
    startMs,
    firstTokenMs: startMs + ttftMs,
    lastEventMs: startMs + e2eMs,
    ttftMs,
    latencyMs: e2eMs,
    outputLen: gaps + 1,
    cachedTokens: 3584,
    cachedDeviceTokens: -1,
    cachedHostTokens: -1,
    cachedStorageTokens: -1,
    itlMs: new Float64Array(gaps).fill((e2eMs - ttftMs) / gaps),
    tokenEvents: gaps + 1,
    finishReason: "length",
    generatedText: "",
  };
}

/** ms of buildTimeline and of steadyState on a line of n requests over 60 s, median of `runs`; the timeline's bytes. */
function postMeasurement(n: number, runs: number): { timelineMs: number; steadyMs: number; bytes: number } {
  const spacing = 60_000 / n;
  const records = Array.from({ length: n }, (_, i) => rec(i, 10_000 + i * spacing, 150 + (i % 37), 1250 + (i % 101)));
  const time = (f: () => unknown) => {
    f(); // JIT and heap warmed first: the line's summary runs once per line, in a process that has been running
    const ms: number[] = [];
    for (let k = 0; k < runs; k++) {
      const t = performance.now();
      f();
      ms.push(performance.now() - t);
    }
    return percentile(ms, 50);
  };
  return {
    timelineMs: time(() => buildTimeline(records)),
    steadyMs: time(() => steadyState(records)),
    bytes: formatJsonl({ timeline: buildTimeline(records) }).length,
  };
}

const median = (xs: number[]) => (xs.length > 0 ? percentile(xs, 50) : NaN);

export async function runTimelineCost(ctx: BenchContext): Promise<ScenarioResult> {
  const t0 = performance.now();
  const load = loadavg()[0]!;
  const streams = ctx.quick ? 64 : 256;
  const outputLen = ctx.quick ? 25 : 100;
  const pairs = ctx.quick ? 1 : 5;
  const bins: Array<{ name: string; bin: string }> = [...(ctx.baseline ? [{ name: "before", bin: ctx.baseline }] : []), { name: "after", bin: ctx.bin }];
  const trials: Array<{ name: string; r: TrialResult }> = [];
  for (let p = 0; p < pairs; p++) {
    for (const { name, bin } of bins) {
      progress(`timeline-cost: ${name} (${bin}) ${streams} streams x ${outputLen} events, pair ${p + 1}/${pairs}`);
      const r = await runTrial(
        { ...ctx, bin },
        { tool: "warmbench", streams, itlMs: ITL_MS, outputLen, totalTokens: 64, pct: 0, tokenizer: ctx.tokenizers.llama2, timeoutMs: 120_000 },
      );
      trials.push({ name, r });
    }
  }
  const row = ({ name, r }: { name: string; r: TrialResult }) => [
    name,
    String(r.spec.streams),
    String(r.truth.events),
    fmt(r.clientCpuUsPerEvent, 1),
    r.errors ? fmt(r.errors.delayP99, 3) : "n/a",
    r.errors ? fmt(r.errors.ttftP99, 3) : "n/a",
    r.errors ? fmt(r.errors.itlP99, 3) : "n/a",
    fmt(r.client.cpuMs / 1000, 2),
    fmt(r.client.wallMs / 1000, 1),
    r.note,
  ];
  const of = (name: string, f: (r: TrialResult) => number) => trials.filter((t) => t.name === name && t.r.note === "").map((t) => f(t.r));
  const cpu = (name: string) => of(name, (r) => r.clientCpuUsPerEvent);
  const before = cpu("before"),
    after = cpu("after");
  // Within the spread of the baseline's own trials (or 5 % of its median, whichever is wider): not measurable.
  const slack = Math.max(Math.max(...before) - Math.min(...before), 0.05 * median(before));
  const hotTarget: TargetCheck = {
    target: "timeline: nothing measurable on the hot path (median client CPU µs/event after <= before + its spread)",
    measured:
      before.length > 0
        ? `before ${fmt(median(before), 1)}, after ${fmt(median(after), 1)} µs/event (medians of ${before.length} and ${after.length})`
        : "no --baseline: not compared",
    pass: ctx.quick || before.length === 0 || after.length === 0 ? null : median(after) <= median(before) + slack,
  };
  const sizes = ctx.quick ? [3000] : [3000, 30_000];
  const post = sizes.map((n) => ({ n, ...postMeasurement(n, 5) }));
  for (const p of post) progress(`timeline-cost: ${p.n} x 256 tokens: timeline ${fmt(p.timelineMs, 1)} ms, steady state ${fmt(p.steadyMs, 1)} ms`);
  return {
    name: "timeline-cost",
    title: `Timeline cost: the hot path before and after the timeline (${streams} streams x 50 ev/s, mock itl ${ITL_MS} ms), and the work after the measurement`,
    columns: [
      "binary",
      "streams",
      "events",
      "CPU µs/event (window)",
      "event delay p99 ms",
      "TTFT err p99 ms",
      "ITL err p99 ms",
      "CPU s (whole run)",
      "wall s",
      "note",
    ],
    rows: trials.map(row),
    targets: [hotTarget],
    notes: [
      `before = the binary given as --baseline (${ctx.baseline ?? "none"}), after = the one measured (${ctx.bin}); trials interleaved so that the box's load drifts over both alike.`,
      `The box's 1-minute load average at the start: ${load.toFixed(2)} on ${cpus().length} cores (seven engineers share it): the latency columns swing by trial far more than by binary, so the CPU per event is what is judged.`,
      "window = from the mock's first /generate receipt to its last event; the timeline and the steady state are computed after it, so they can show only in the whole run's CPU.",
      "The post-measurement table times buildTimeline and steadyState in the harness's own process (Bun; one unmeasured run first, then the median of 5), on synthetic lines of N requests x 256 tokens over 60 s.",
    ],
    extraTables: [
      {
        title: "Timeline cost: the work after the measurement, per line",
        columns: ["requests x tokens", "timeline ms", "steady state ms", "timeline bytes (as written)"],
        rows: post.map((p) => [`${p.n} x 256`, fmt(p.timelineMs, 1), fmt(p.steadyMs, 1), String(p.bytes)]),
      },
    ],
    trials: trials.map((t) => t.r),
    figures: { loadAverage: load, cpuUsPerEventBefore: before.length ? median(before) : null, cpuUsPerEventAfter: after.length ? median(after) : null },
    details: { binaries: trials.map((t) => t.name), postMeasurement: post },
    elapsedS: (performance.now() - t0) / 1000,
  };
}
