/**
 * The steady-state window of a line: the longest interval in which the requests in flight stay at or above 80 % of
 * their peak (SGLang's rule: sglang.benchmark.steady_state_serving, --steady-state-concurrency-ratio 0.8), on the
 * exact in-flight count from every request's send and end; the ramp before it and the drain after it are left out.
 * A dip below the floor shorter than HANDOFF_MS (a slot passing from one request to the next) does not end it.
 * Its metrics are those of the successful requests sent inside it; its throughputs count what arrived inside it. Pure.
 */
import type { RequestRecord } from "../schema/record.ts";
import type { SteadyState } from "../schema/timeline-shape.ts";
import { npMean, npPercentile } from "./stats.ts";
import { endMsOf, forEachToken, originMsOf } from "./timeline.ts";

const STEADY_STATE_RATIO = 0.8;
const HANDOFF_MS = 5;

interface Step {
  fromMs: number;
  toMs: number;
  level: number;
}

/** The in-flight count as steps of positive length; at one instant, ends count before sends (a slot handed over). */
function inFlightSteps(records: readonly RequestRecord[]): Step[] {
  const events: Array<[number, number]> = [];
  for (const r of records) events.push([r.startMs, 1], [endMsOf(r), -1]);
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const steps: Step[] = [];
  let level = 0;
  for (let i = 0; i < events.length; i++) {
    level += events[i]![1];
    const next = events[i + 1];
    if (next !== undefined && next[0] > events[i]![0]) steps.push({ fromMs: events[i]![0], toMs: next[0], level });
  }
  return steps;
}

/** The longest run of steps at or above `floor`, bridging dips shorter than HANDOFF_MS; null when none. */
function longestRun(steps: readonly Step[], floor: number): { fromMs: number; toMs: number } | null {
  let best: { fromMs: number; toMs: number } | null = null;
  let run: { fromMs: number; toMs: number } | null = null;
  let dipFromMs = NaN;
  for (const s of steps) {
    if (s.level >= floor) {
      run = run ?? { fromMs: s.fromMs, toMs: s.toMs };
      run.toMs = s.toMs;
      dipFromMs = NaN;
      if (best === null || run.toMs - run.fromMs > best.toMs - best.fromMs) best = { ...run };
      continue;
    }
    if (Number.isNaN(dipFromMs)) dipFromMs = s.fromMs;
    if (s.toMs - dipFromMs >= HANDOFF_MS) run = null;
  }
  return best;
}

const orNull = (v: number): number | null => (Number.isFinite(v) ? v : null);

export function steadyState(records: readonly RequestRecord[], ratio = STEADY_STATE_RATIO): SteadyState | null {
  const steps = inFlightSteps(records);
  const peak = steps.reduce((p, s) => Math.max(p, s.level), 0);
  if (peak === 0) return null;
  const floor = Math.ceil(ratio * peak - 1e-9);
  const run = longestRun(steps, floor);
  if (run === null) return null;
  const { fromMs, toMs } = run;
  const durationMs = toMs - fromMs;
  const inside = (ms: number) => ms >= fromMs && ms <= toMs;
  let busyMs = 0;
  for (const s of steps) busyMs += s.level * Math.max(0, Math.min(s.toMs, toMs) - Math.max(s.fromMs, fromMs));
  const sent = records.filter((r) => r.ok && inside(r.startMs));
  const itl = new Float64Array(sent.reduce((n, r) => n + r.itlMs.length, 0));
  let filled = 0;
  for (const r of sent) {
    itl.set(r.itlMs, filled);
    filled += r.itlMs.length;
  }
  const ttft = sent.map((r) => r.ttftMs);
  let tokens = 0;
  for (const r of records) {
    // A request whose every token falls inside counts whole, without walking its gaps.
    if (r.ok && r.firstTokenMs >= fromMs && r.lastEventMs <= toMs) tokens += Math.max(r.outputLen, r.itlMs.length + 1);
    else forEachToken(r, (ms) => void (inside(ms) && tokens++));
  }
  const ended = records.filter((r) => r.ok && inside(endMsOf(r))).length;
  const t0 = originMsOf(records);
  return {
    rule: ratio,
    start_s: (fromMs - t0) / 1000,
    end_s: (toMs - t0) / 1000,
    duration_s: durationMs / 1000,
    peak_in_flight: peak,
    min_in_flight: floor,
    mean_in_flight: durationMs > 0 ? busyMs / durationMs : peak,
    requests: sent.length,
    mean_ttft_ms: orNull(npMean(ttft)),
    p99_ttft_ms: orNull(npPercentile(ttft, 99)),
    mean_itl_ms: orNull(npMean(itl)),
    p99_itl_ms: orNull(npPercentile(itl, 99)),
    mean_e2e_latency_ms: orNull(npMean(sent.map((r) => r.latencyMs))),
    request_throughput: durationMs > 0 ? ended / (durationMs / 1000) : 0,
    output_throughput: durationMs > 0 ? tokens / (durationMs / 1000) : 0,
  };
}
