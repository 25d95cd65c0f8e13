/**
 * A replay's lines, made by the engine: one per window of trace time (axis `window`: the requests whose trace
 * timestamp falls in it) and one for the whole replay (no `window`), each made by summarizePoint with every request's
 * range from the one cache model as its expectation, then the replay's own keys; judged (--gate: the whole replay's
 * line only, its windows are the trace's) and sent to the sink with each request's details. The producer hands the
 * trace and where its results go, as data. Where a line sits is fixed by the trace, not by the run: shared_prefix_pct
 * is the hit ratio an infinite cache gives the window's requests one after another (as `replay --analyze` reports
 * it), request_rate the trace's own (scaled) rate, so two runs of one trace pair up.
 */
import { evaluateGates } from "../gates/evaluate.ts";
import type { Gate } from "../schema/gate.ts";
import { judge, predictionOf, totals, type CheckedRequest } from "../metrics/replay-check.ts";
import { npMedian } from "../metrics/stats.ts";
import type { SweepLine } from "../metrics/sweep-line.ts";
import { analyzeTrace, type AnalyzedWindow } from "../metrics/trace-analysis.ts";
import type { TtftMoments } from "../metrics/ttft-model.ts";
import type { RequestRecord } from "../schema/record.ts";
import type { Trace } from "../workload/trace.ts";
import { partOfMeasurement } from "./measure.ts";
import type { MeasuredPoint, PointLines, StudyResult } from "./point-plan.ts";
import type { ReplayLineSink } from "./sink.ts";
import { summarizePoint, type PointSpec, type SummaryContext } from "./summarize.ts";

/** Everything the producer knows of a replay's lines before it is sent: the trace, how it was replayed, where the lines go. */
export interface ReplayLineRecipe {
  trace: Trace;
  /** How the trace was replayed (--window-s, --time-scale, --ignore-timestamps, --seed) and the run's --gate. */
  replay: { windowS: number; timeScale: number; ignoreTimestamps: boolean; seed: bigint; gates: readonly Gate[] };
  /** The capacity the model evicted at where it is not the server's (--cache-tokens). */
  modelCapacityTokens: number | undefined;
  summary: SummaryContext;
  sink: ReplayLineSink;
}

/** Each measured request judged against its range from the one cache model (null where it does not apply). */
export function checkedRequests(point: MeasuredPoint): Map<number, CheckedRequest> {
  return new Map(point.measurement.records.map((r) => [r.index, judge(r, predictionOf(point.ranges?.get(r.index)))]));
}

export function replayLines(r: ReplayLineRecipe): PointLines<SweepLine> {
  let checked = new Map<number, CheckedRequest>();
  return {
    build: (point, studies) => {
      checked = checkedRequests(point);
      return replayPoints({ ...r, point, checked, studies });
    },
    judge: (line) => (line.window === undefined ? evaluateGates(r.replay.gates, line) : []),
    emit: (lines, point, detailsOf) => {
      r.sink.details(r.summary.runId, point.measurement.records, r.trace.requests, checked, detailsOf);
      for (const line of lines) r.sink.line(line);
    },
  };
}

/**
 * What a replay's line (a Mooncake window, the whole replay, an agentic replay) reads of its checked requests: the
 * mean prompt, the typical expected count and each request's range for the spec, and the trace-cache keys of its
 * producer group, over the requests that reported cached tokens.
 */
export function checkedLineOf(
  records: readonly RequestRecord[],
  byIndex: ReadonlyMap<number, CheckedRequest>,
  trace: { blockSize: number; timeScale: number | null },
) {
  const t = totals(records.map((r) => byIndex.get(r.index)).filter((c) => c !== undefined));
  const input = records.reduce((a, r) => a + r.promptLen, 0);
  const reportedInput = records.filter((r) => r.ok && r.cachedTokens >= 0).reduce((a, r) => a + r.promptLen, 0);
  const infiniteHitRatio = reportedInput > 0 ? t.expectedInfiniteTokens / reportedInput : 0;
  const range = (index: number) => {
    const c = byIndex.get(index);
    return c === undefined || c.verdict === "unjudged" ? null : ([c.lower, c.upper] as const);
  };
  return {
    promptLen: records.length > 0 ? Math.round(input / records.length) : 0,
    typical: t.checked > 0 ? Math.round(t.expectedLowerTokens / t.checked) : 0,
    range,
    infiniteHitRatio,
    keys: {
      block_size: trace.blockSize,
      time_scale: trace.timeScale,
      infinite_hit_ratio: infiniteHitRatio,
      predicted_eviction_tokens: t.predictedEvictionTokens,
      observed_shortfall_tokens: t.observedShortfallTokens,
      cache_short_requests: t.short,
      cache_over_requests: t.over,
    },
  };
}

interface PointsInput extends ReplayLineRecipe {
  point: MeasuredPoint;
  checked: ReadonlyMap<number, CheckedRequest>;
  /** What the engine's studies found (the fidelity check, several replicas' ledger): on the whole replay's line. */
  studies: readonly StudyResult[];
}

/** Buckets of the cached fraction: quartiles. */
const QUARTILES = [0, 0.25, 0.5, 0.75, 1] as const;

function ttftByCachedFraction(records: readonly RequestRecord[]) {
  return QUARTILES.slice(0, -1).map((from, i) => {
    const to = QUARTILES[i + 1]!;
    const last = i === QUARTILES.length - 2;
    const ttft = records
      .filter((r) => r.ok && r.cachedTokens >= 0 && r.promptLen > 0)
      .filter((r) => {
        const f = r.cachedTokens / r.promptLen;
        return f >= from && (f < to || (last && f <= to));
      })
      .map((r) => r.ttftMs);
    return { from, to, requests: ttft.length, median_ttft_ms: ttft.length > 0 ? npMedian(ttft) : null };
  });
}

function replayPoints(i: PointsInput): SweepLine[] {
  const { trace } = i;
  const m = i.point.measurement;
  const page = i.summary.server.pageSize;
  // An interrupted replay is summarized over the part of the trace it reached: analyzing the rest would only delay
  // the exit (a first signal must end the run within moments, plus the time to write what was measured).
  const reached = m.interrupted && m.records.length > 0 ? m.records.reduce((most, r) => Math.max(most, r.index), 0) + 1 : trace.requests.length;
  const analysis = analyzeTrace(reached < trace.requests.length ? { ...trace, requests: trace.requests.slice(0, reached) } : trace, {
    pageSize: page,
    cacheTokens: null,
    windowS: i.replay.windowS,
  });
  const windowOf = (timestampMs: number) => Math.floor(timestampMs / 1000 / i.replay.windowS);
  const byWindow = new Map<number, RequestRecord[]>();
  for (const r of m.records) {
    const w = windowOf(trace.requests[r.index]!.timestampMs);
    const list = byWindow.get(w);
    if (list === undefined) byWindow.set(w, [r]);
    else list.push(r);
  }
  const planned = new Map<number, number>();
  for (const r of trace.requests) planned.set(windowOf(r.timestampMs), (planned.get(windowOf(r.timestampMs)) ?? 0) + 1);
  const idsHash = traceHash(trace, i.replay.seed);
  const out: SweepLine[] = [];
  let fit: TtftMoments | null = null;
  const windows = new Map(analysis.windows.map((w) => [w.window, w]));
  for (const [w, records] of [...byWindow.entries()].sort((a, b) => a[0] - b[0])) {
    const spanS = i.replay.windowS * i.replay.timeScale;
    const point = onePoint(i, records, {
      window: w,
      analyzed: windows.get(w)!,
      planned: planned.get(w)!,
      rate: i.replay.ignoreTimestamps ? Infinity : planned.get(w)! / spanS,
      first: out.length === 0,
      fit,
      idsHash,
    });
    fit = point.fit;
    out.push(point.record);
  }
  if (m.records.length === 0) return out;
  const first = trace.requests[0]!.timestampMs;
  const spanS = ((trace.requests.at(-1)!.timestampMs - first) / 1000) * i.replay.timeScale;
  const whole: AnalyzedWindow = {
    window: -1,
    requests: analysis.requests,
    inputTokens: 0,
    workingSetTokens: analysis.workingSetTokens,
    infiniteHitRatio: analysis.infiniteHitRatio,
    lruHitRatio: null,
  };
  const rate = i.replay.ignoreTimestamps ? Infinity : trace.requests.length / Math.max(spanS, i.replay.windowS * i.replay.timeScale);
  // The whole replay's TTFT model is fitted on its own requests: each was already counted once in its window's.
  out.push(onePoint(i, m.records, { window: null, analyzed: whole, planned: trace.requests.length, rate, first: out.length === 0, fit: null, idsHash }).record);
  return out;
}

interface Where {
  window: number | null;
  analyzed: AnalyzedWindow;
  planned: number;
  rate: number;
  first: boolean;
  fit: TtftMoments | null;
  idsHash: string;
}

function onePoint(i: PointsInput, records: RequestRecord[], at: Where): { record: SweepLine; fit: TtftMoments | null } {
  const { promptLen, typical, range, keys } = checkedLineOf(records, i.checked, {
    blockSize: i.trace.blockSize,
    timeScale: i.replay.ignoreTimestamps ? null : i.replay.timeScale,
  });
  const spec: PointSpec = {
    axes: {
      shared_prefix_pct: Math.round(at.analyzed.infiniteHitRatio * 100),
      working_set: 1,
      request_rate: at.rate,
      ...(at.window === null ? {} : { window: at.window }),
    },
    prefixLen: typical,
    suffixLen: promptLen - typical,
    promptLen,
    numPrompts: at.planned,
    workingSetTokens: at.analyzed.workingSetTokens,
    promptIdsHash: at.idsHash,
    expected: { typical, perPrompt: range, hitRatios: "per-request" },
    warmProvesFlush: false,
    promptDrift: null,
    first: at.first,
    ttftFitSoFar: at.fit,
    studies: at.window === null ? i.studies : [],
    // The pressure keys and hit ratios from the one cache model's ranges (each request's own); then the replay's keys.
    ranges: i.point.ranges,
    modelCapacityTokens: i.modelCapacityTokens,
    producerKeys: {
      ...keys,
      ttft_by_cached_fraction: ttftByCachedFraction(records),
    },
  };
  // The server's counters cover the whole replay only.
  const m = partOfMeasurement(i.point.measurement, records, at.window === null);
  const summary = summarizePoint(spec, i.point.reset, i.point.warm, m, i.summary);
  const record = summary.record;
  return { record, fit: summary.sweepFit };
}

/** The replayed slice's identity (the workload fingerprint's prompt_ids_hash): its lengths, hash ids, block size and seed. */
function traceHash(trace: Trace, seed: bigint): string {
  const h = new Bun.CryptoHasher("sha256");
  h.update(`${trace.blockSize}:${seed}\n`);
  for (const r of trace.requests) h.update(`${r.timestampMs},${r.inputLength},${r.outputLength},${r.hashIds.join(" ")}\n`);
  return h.digest("hex");
}
