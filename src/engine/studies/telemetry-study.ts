/**
 * Server telemetry as a study (--scrape-interval): every server, or each replica, scraped on its own timer while the
 * point runs (client/telemetry-scraper.ts), once before the reset and once after the requests, each scrape read in
 * its engine's dialect (metrics/telemetry-dialects.ts). After the point: the series in the line's timeline buckets,
 * the summaries compare and gates judge, and the reconciliation of the servers' counters with the client's own
 * records over the measured window (a disagreement is a named finding: server_counters_disagree, on the console too).
 *
 * The measured window starts where the engine tells the watch `measuring()`: between the warm and the first send (a
 * round under the barrier: before its first turn, the rounds before it all ended). A round without the barrier has no
 * such moment - the rounds overlap - so its reconciliation is null rather than counting another round's requests.
 */
import { TelemetryScraper } from "../../client/telemetry-scraper.ts";
import { log } from "../../log.ts";
import { readByDialect, readSnapshot, type TelemetrySnapshot } from "../../metrics/telemetry-dialects.ts";
import { parsePrometheusText, sumSamples } from "../../metrics/telemetry-prometheus-text.ts";
import { reconcile, type ReconciliationRow } from "../../metrics/telemetry-reconcile.ts";
import { telemetrySeries, telemetrySummary, type ServerScrapes, type TimedScrape } from "../../metrics/telemetry-series.ts";
import { nowMs } from "../../client/clock.ts";
import type { Control } from "../../backends/http.ts";
import type { RequestRecord } from "../../schema/record.ts";
import type { Study, StudyWatch } from "../study.ts";

/**
 * What --serve-metrics (output/serve-metrics.ts) is told as the run goes: each point as it begins (its progress
 * label), each measured request as it is sent and as it ends. This process's requests only (a shard's are its own).
 */
export interface LiveFeed {
  point(label: string): void;
  sent(): void;
  settled(record: RequestRecord): void;
}

let liveFeed: LiveFeed | null = null;

/** The command line hands its exporter in once (null: none); every point's requests feed it from then on. */
export function feedLiveMetrics(feed: LiveFeed | null): void {
  liveFeed = feed;
}

interface Watched {
  url: string;
  scraper: TelemetryScraper;
  scrapes: TimedScrape[];
  /** The scrape taken as the measurement began: the reconciliation's start. */
  mark: TelemetrySnapshot | null;
}

/** The watch of one point: its scrapers, and the mark of the measurement's start. */
interface TelemetryWatch extends StudyWatch {
  intervalMs: number;
  startedMs: number;
  stoppedMs: number | null;
  servers: Watched[];
  /** Marked: measuring() ran (the measurement's start is known, so the counters are reconciled). */
  marked: boolean;
}

function onBody(w: Watched, keepUnknown: boolean): (text: string, atMs: number) => void {
  return (text, atMs) => {
    const families = parsePrometheusText(text);
    const snapshot = readSnapshot(families);
    let unknown: Record<string, number> | undefined;
    if (keepUnknown) {
      unknown = {};
      for (const [name, f] of families) {
        if (readByDialect(snapshot?.dialect ?? null, name)) continue;
        const v = sumSamples(f);
        if (v !== null) unknown[name] = v;
      }
    }
    w.scrapes.push({ atMs, snapshot, ...(unknown === undefined ? {} : { unknown }) });
  };
}

const lastSnapshot = (w: Watched): TelemetrySnapshot | null => w.scrapes.findLast((s) => s.snapshot !== null)?.snapshot ?? null;

export const telemetryStudy: Study = {
  name: "telemetry",
  begin(ctx, label) {
    const o = ctx.opts;
    const intervalMs = o.scrapeIntervalMs ?? 0;
    const feed = liveFeed;
    if (intervalMs <= 0 && feed === null) return undefined;
    const set = ctx.replicas;
    const targets: { url: string; ctl: Control }[] =
      intervalMs <= 0 ? [] : set === undefined ? [{ url: ctx.ctl.baseUrl, ctl: ctx.ctl }] : set.urls.map((url, r) => ({ url, ctl: set.ctls[r]! }));
    const servers: Watched[] = targets.map((t) => {
      const w: Watched = { url: t.url, scraper: undefined as unknown as TelemetryScraper, scrapes: [], mark: null };
      w.scraper = new TelemetryScraper(t.ctl, onBody(w, o.scrapeAll === true));
      return w;
    });
    const first = Promise.all(servers.map((w) => w.scraper.scrapeNow()));
    feed?.point(label);
    const watch: TelemetryWatch = {
      intervalMs,
      startedMs: nowMs(),
      stoppedMs: null,
      servers,
      marked: false,
      async stop() {
        await first;
        for (const w of servers) await w.scraper.stop();
        // The scrape after the point: the counters once every request has ended.
        await Promise.all(servers.map((w) => w.scraper.scrapeNow()));
        watch.stoppedMs = nowMs();
      },
    };
    if (servers.length > 0) {
      watch.measuring = async () => {
        await first;
        await Promise.all(servers.map((w) => w.scraper.scrapeNow()));
        for (const w of servers) w.mark = lastSnapshot(w);
        watch.marked = true;
      };
    }
    if (feed !== null) {
      // Every measured request as it goes out and as it ends, for the live exporter.
      watch.sent = () => feed.sent();
      watch.settled = (record) => feed.settled(record);
    }
    for (const w of servers) w.scraper.start(intervalMs);
    return watch;
  },
  after(point, ctx, _plan, studyWatch) {
    const watch = studyWatch as TelemetryWatch | undefined;
    if (watch === undefined || watch.servers.length === 0) return null;
    const records = point.measurement.records;
    const scrapes: ServerScrapes[] = watch.servers.map((w) => ({ url: w.url, scrapes: w.scrapes, failed: w.scraper.counts.failed + w.scraper.counts.missed }));
    const ok = scrapes.reduce((a, s) => a + s.scrapes.filter((x) => x.snapshot !== null).length, 0);
    if (scrapes.every((s) => s.scrapes.length === 0)) {
      // No server answered /metrics: nothing to say (as the server hit rate row without /metrics).
      return null;
    }
    const durationMs = (watch.stoppedMs ?? nowMs()) - watch.startedMs;
    // Before, after, one per interval, and the mark of the measurement's start where one was taken.
    const intended = watch.servers.length * (2 + Math.floor(durationMs / watch.intervalMs) + (watch.marked ? 1 : 0));
    const series = telemetrySeries(scrapes, records);
    const t0 = point.measurement.t0Ms;
    const summary = telemetrySummary(scrapes, { fromMs: t0, toMs: t0 + point.measurement.durationS * 1000 }, records.filter((r) => r.ok).length);
    const rows = watch.marked && !point.measurement.interrupted ? reconcileServers(watch, point.router?.assigned, records, ctx.replicas !== undefined) : null;
    const disagree = rows === null ? null : rows.filter((r) => !r.agrees).length;
    for (const r of rows ?? []) {
      if (!r.agrees) log.warn(`server_counters_disagree: ${r.counter} on ${r.url}: the server's /metrics counted ${r.server}, the client saw ${r.client}`);
    }
    return {
      keys: {
        server_telemetry:
          series === null
            ? null
            : {
                interval_ms: watch.intervalMs,
                scrapes_intended: intended,
                scrapes_ok: ok,
                scrapes_failed: scrapes.reduce((a, s) => a + s.failed, 0),
                ...series,
              },
        server_kv_usage_peak: summary.kvUsagePeak,
        server_queue_mean: summary.queueMean,
        server_preemptions_per_request: summary.preemptionsPerRequest,
        server_reconciliation: rows,
        server_counters_disagree: disagree,
      },
      samples: { telemetry: ok },
    };
  },
};

/** Each server's window (the mark to the scrape after) against the records it served. */
function reconcileServers(
  watch: TelemetryWatch,
  assigned: ReadonlyMap<number, number> | undefined,
  records: Parameters<typeof reconcile>[0][number]["records"],
  routed: boolean,
): ReconciliationRow[] {
  return reconcile(
    watch.servers.map((w, r) => ({
      replica: routed ? r : null,
      url: w.url,
      before: w.mark,
      after: lastSnapshot(w),
      records: routed ? records.filter((x) => assigned?.get(x.index) === r) : records,
    })),
  );
}
