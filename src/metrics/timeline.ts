/**
 * A line's run over time, from its records after the measurement (never per event on the hot path): fixed buckets
 * from the line's first send, at most MAX_BUCKETS of them, each with the requests sent and ended, the requests in
 * flight, the output tokens, the mean TTFT and ITL, and the share of prompt tokens found cached; written packed
 * (timeline-codec.ts), read back with unpackTimeline. Pure.
 */
import type { RequestRecord } from "../schema/record.ts";
import type { Timeline } from "../schema/timeline-shape.ts";
import { decodeSeries, encodeSeries, SERIES_NAMES, SERIES_UNITS, type SeriesName } from "./timeline-codec.ts";

/** A timeline as numbers: one array per series, one value per bucket (null: nothing to average). */
export type TimelineData = { bucket_s: number } & { [K in SeriesName]: K extends "ttft_ms" | "itl_ms" | "cached_pct" ? (number | null)[] : number[] };

export const MAX_BUCKETS = 120;

/** When a request left the client's hands: its last event, or its start plus its latency, whichever is later. */
export const endMsOf = (r: RequestRecord): number => Math.max(r.startMs, r.lastEventMs, r.startMs + r.latencyMs);

/** The line's clock origin: its first send (nowMs() clock, ms). */
export const originMsOf = (records: readonly RequestRecord[]): number => records.reduce((t, r) => Math.min(t, r.startMs), Infinity);

/**
 * Calls `at` with the arrival time of every output token of a successful request: the first at its first token
 * event, each later one at the end of its gap (the gaps add up to the event that carried it); tokens the server
 * counted beyond the gaps arrive with the last event.
 */
export function forEachToken(r: RequestRecord, at: (ms: number) => void): void {
  if (!r.ok || r.firstTokenMs <= 0) return;
  let t = r.firstTokenMs;
  at(t);
  // No token arrives after the last event (the gaps' float sum may overshoot it by a rounding error).
  for (let i = 0; i < r.itlMs.length; i++) {
    t = Math.min(t + r.itlMs[i]!, r.lastEventMs);
    at(t);
  }
  for (let k = r.itlMs.length + 1; k < r.outputLen; k++) at(r.lastEventMs);
}

/** The smallest 1-2-5 width (ms) that covers durationMs in at most MAX_BUCKETS buckets. */
export function bucketWidthMs(durationMs: number): number {
  const least = Math.max(durationMs, 1) / MAX_BUCKETS;
  for (let decade = 10 ** Math.floor(Math.log10(least)); ; decade *= 10) {
    for (const step of [1, 2, 5]) if (step * decade >= least) return step * decade;
  }
}

const meanOf = (sum: number, n: number): number | null => (n > 0 ? sum / n : null);

/** The line's timeline as written; null when it sent nothing. */
export function buildTimeline(records: readonly RequestRecord[]): Timeline | null {
  const data = timelineData(records);
  return data === null ? null : packTimeline(data);
}

function packTimeline(data: TimelineData): Timeline {
  const packed = { bucket_s: data.bucket_s, buckets: data.started.length } as Timeline;
  for (const name of SERIES_NAMES) packed[name] = encodeSeries(data[name], SERIES_UNITS[name]);
  return packed;
}

/** A written timeline's numbers (on each series' grid: in_flight to 0.1, TTFT and ITL to 3 digits, 0.01 ms at finest). */
export function unpackTimeline(t: Timeline): TimelineData {
  const data = { bucket_s: t.bucket_s } as TimelineData;
  for (const name of SERIES_NAMES) {
    const values = decodeSeries(t[name], SERIES_UNITS[name]);
    if (values.length !== t.buckets) throw new Error(`timeline ${name}: ${values.length} values for ${t.buckets} buckets`);
    (data as Record<SeriesName, (number | null)[]>)[name] = values;
  }
  return data;
}

/** The line's buckets at full precision; null when it sent nothing. */
export function timelineData(records: readonly RequestRecord[]): TimelineData | null {
  if (records.length === 0) return null;
  const t0 = originMsOf(records);
  const endMs = records.reduce((t, r) => Math.max(t, endMsOf(r)), t0);
  const width = bucketWidthMs(endMs - t0);
  const n = Math.min(MAX_BUCKETS, Math.max(1, Math.ceil((endMs - t0) / width)));
  // A time on the last edge (the line's last event) belongs to the last bucket.
  const at = (ms: number) => Math.min(n - 1, Math.max(0, Math.floor((ms - t0) / width)));
  const zeros = () => new Array<number>(n).fill(0);
  const started = zeros(),
    finished = zeros(),
    busyMs = zeros(),
    tokens = zeros();
  const ttftSum = zeros(),
    ttftN = zeros(),
    itlSum = zeros(),
    itlN = zeros(),
    cached = zeros(),
    prompt = zeros();
  for (const r of records) {
    const s = r.startMs,
      e = endMsOf(r);
    started[at(s)]!++;
    finished[at(e)]!++;
    // Time in flight, spread over the buckets the request spans.
    for (let b = at(s); b <= at(e); b++) busyMs[b]! += Math.max(0, Math.min(e, t0 + (b + 1) * width) - Math.max(s, t0 + b * width));
    if (r.cachedTokens >= 0) {
      cached[at(s)]! += r.cachedTokens;
      prompt[at(s)]! += r.promptLen;
    }
    if (!r.ok || r.firstTokenMs <= 0) continue;
    ttftSum[at(r.firstTokenMs)]! += r.ttftMs;
    ttftN[at(r.firstTokenMs)]!++;
    // The tokens as forEachToken places them, walked once with the gaps that end in each bucket.
    let t = r.firstTokenMs;
    tokens[at(t)]!++;
    for (let i = 0; i < r.itlMs.length; i++) {
      t = Math.min(t + r.itlMs[i]!, r.lastEventMs);
      const b = at(t);
      itlSum[b]! += r.itlMs[i]!;
      itlN[b]!++;
      tokens[b]!++;
    }
    if (r.outputLen > r.itlMs.length + 1) tokens[at(r.lastEventMs)]! += r.outputLen - r.itlMs.length - 1;
  }
  // The last bucket may be cut short by the line's end: its mean is over the time it covers.
  const span = (b: number) => Math.min(width, endMs - t0 - b * width) || width;
  return {
    bucket_s: width / 1000,
    started,
    finished,
    in_flight: busyMs.map((ms, b) => ms / span(b)),
    output_tokens: tokens,
    ttft_ms: ttftSum.map((sum, b) => meanOf(sum, ttftN[b]!)),
    itl_ms: itlSum.map((sum, b) => meanOf(sum, itlN[b]!)),
    cached_pct: cached.map((c, b) => (prompt[b]! > 0 ? (100 * c) / prompt[b]! : null)),
  };
}
