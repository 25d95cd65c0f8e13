/**
 * A point's scrapes as the line keeps them: per server (or replica), KV usage, running and waiting requests in the
 * client timeline's own buckets (the same origin and width as metrics/timeline.ts, so a bucket of one is the same
 * time as the other's), each series in the timeline's compact codec; and the scalar summaries compare and gates
 * judge: the peak KV usage, the mean queue, preemptions per finished request. Pure.
 */
import type { RequestRecord } from "../schema/record.ts";
import { decodeSeries, encodeSeries } from "./timeline-codec.ts";
import { bucketWidthMs, endMsOf, MAX_BUCKETS, originMsOf } from "./timeline.ts";
import type { Dialect, TelemetrySnapshot } from "./telemetry-dialects.ts";

/** One scrape: when it was answered (the client's clock, ms) and what it said; null: failed or not understood. */
export interface TimedScrape {
  atMs: number;
  snapshot: TelemetrySnapshot | null;
  /** With --scrape-all: the families no dialect reads, each summed over its label sets. */
  unknown?: Readonly<Record<string, number>>;
}

/** One server's scrapes over the point: the one before it, those of the timer, the one after. */
export interface ServerScrapes {
  url: string;
  scrapes: readonly TimedScrape[];
  failed: number;
}

/** Each series' step in the codec: percent at 0.1, requests at 0.1 (a bucket's mean). */
const TELEMETRY_SERIES_UNITS = { kv_usage_pct: 0.1, running: 0.1, waiting: 0.1 } as const;

interface ReplicaSeries {
  url: string;
  dialect: Dialect | null;
  scrapes_ok: number;
  scrapes_failed: number;
  kv_usage_pct: string;
  running: string;
  waiting: string;
  /** --scrape-all: the last value of every family no dialect reads; absent otherwise. */
  unknown_families?: Record<string, number>;
}

/** A replica's packed series as numbers, one per bucket (null: no scrape in it). */
export function unpackReplicaSeries(
  r: Pick<ReplicaSeries, "kv_usage_pct" | "running" | "waiting">,
): Record<keyof typeof TELEMETRY_SERIES_UNITS, (number | null)[]> {
  const u = TELEMETRY_SERIES_UNITS;
  return {
    kv_usage_pct: decodeSeries(r.kv_usage_pct, u.kv_usage_pct),
    running: decodeSeries(r.running, u.running),
    waiting: decodeSeries(r.waiting, u.waiting),
  };
}

export interface TelemetrySeries {
  bucket_s: number;
  buckets: number;
  replicas: ReplicaSeries[];
}

/** The client timeline's buckets: origin, width, count; null when nothing was sent. */
function clientBuckets(records: readonly RequestRecord[]): { t0: number; widthMs: number; count: number } | null {
  if (records.length === 0) return null;
  const t0 = originMsOf(records);
  const end = records.reduce((t, r) => Math.max(t, endMsOf(r)), t0);
  const widthMs = bucketWidthMs(end - t0);
  return { t0, widthMs, count: Math.max(1, Math.min(MAX_BUCKETS, Math.ceil((end - t0) / widthMs))) };
}

function bucketMeans(
  scrapes: readonly TimedScrape[],
  grid: { t0: number; widthMs: number; count: number },
  read: (s: TelemetrySnapshot) => number | null,
): (number | null)[] {
  const sums = new Array<number>(grid.count).fill(0);
  const counts = new Array<number>(grid.count).fill(0);
  for (const s of scrapes) {
    const v = s.snapshot === null ? null : read(s.snapshot);
    if (v === null) continue;
    const b = Math.floor((s.atMs - grid.t0) / grid.widthMs);
    if (b < 0 || b >= grid.count) continue;
    sums[b]! += v;
    counts[b]! += 1;
  }
  return sums.map((v, i) => (counts[i] === 0 ? null : v / counts[i]!));
}

/** Every server's series in the client's buckets; null when nothing was sent. */
export function telemetrySeries(servers: readonly ServerScrapes[], records: readonly RequestRecord[]): TelemetrySeries | null {
  const grid = clientBuckets(records);
  if (grid === null) return null;
  const u = TELEMETRY_SERIES_UNITS;
  return {
    bucket_s: grid.widthMs / 1000,
    buckets: grid.count,
    replicas: servers.map((s) => {
      const ok = s.scrapes.filter((x) => x.snapshot !== null);
      const unknown = s.scrapes.findLast((x) => x.unknown !== undefined)?.unknown;
      return {
        url: s.url,
        dialect: ok[0]?.snapshot?.dialect ?? null,
        scrapes_ok: ok.length,
        scrapes_failed: s.failed,
        kv_usage_pct: encodeSeries(
          bucketMeans(s.scrapes, grid, (x) => (x.kvUsage === null ? null : x.kvUsage * 100)),
          u.kv_usage_pct,
        ),
        running: encodeSeries(
          bucketMeans(s.scrapes, grid, (x) => x.running),
          u.running,
        ),
        waiting: encodeSeries(
          bucketMeans(s.scrapes, grid, (x) => x.waiting),
          u.waiting,
        ),
        ...(unknown === undefined ? {} : { unknown_families: { ...unknown } }),
      };
    }),
  };
}

export interface TelemetrySummary {
  /** The highest KV usage any server reported during the point, 0-1; null: none reported it. */
  kvUsagePeak: number | null;
  /** Requests waiting, summed over the servers, averaged over the scrapes of the measured window. */
  queueMean: number | null;
  /** Preemptions (retractions) over the point per finished request; null: not exposed or nothing finished. */
  preemptionsPerRequest: number | null;
}

/** The summaries over the measured window [fromMs, toMs] (the peak over every scrape of the point). */
export function telemetrySummary(servers: readonly ServerScrapes[], window: { fromMs: number; toMs: number }, finished: number): TelemetrySummary {
  const ok = servers.map((s) => s.scrapes.filter((x) => x.snapshot !== null));
  const usage = ok.flat().flatMap((x) => (x.snapshot!.kvUsage === null ? [] : [x.snapshot!.kvUsage]));
  const perServerQueue = ok.map((xs) => {
    const inside = xs.filter((x) => x.atMs >= window.fromMs && x.atMs <= window.toMs && x.snapshot!.waiting !== null);
    return inside.length === 0 ? null : inside.reduce((a, x) => a + x.snapshot!.waiting!, 0) / inside.length;
  });
  let preempted: number | null = 0;
  for (const xs of ok) {
    const first = xs[0]?.snapshot?.preemptions ?? null;
    const last = xs.at(-1)?.snapshot?.preemptions ?? null;
    preempted = preempted === null || first === null || last === null ? null : preempted + Math.max(0, last - first);
  }
  return {
    kvUsagePeak: usage.length === 0 ? null : Math.max(...usage),
    queueMean: perServerQueue.every((q) => q === null) ? null : perServerQueue.reduce<number>((a, q) => a + (q ?? 0), 0),
    preemptionsPerRequest: preempted === null || finished === 0 || ok.every((xs) => xs.length === 0) ? null : preempted / finished,
  };
}
