/**
 * --serve-metrics HOST:PORT: warmbench's own Prometheus exposition while it runs, for the dashboards a long run (a
 * replay, a soak) is watched from: requests sent, finished, failed and in flight, prompt, output and cached tokens,
 * TTFT and ITL as classic histograms (the 0.0.4 text format has no native buckets: a Prometheus with native
 * histograms enabled still reads these), and the point now running as an info series. Fed by the telemetry study's
 * live feed (engine/studies/telemetry-study.ts feedLiveMetrics) from every point's measured requests; nothing here is
 * on the request path but the counters' additions.
 */
import { feedLiveMetrics, type LiveFeed } from "../engine/studies/telemetry-study.ts";
import type { RequestRecord } from "../schema/record.ts";

/** TTFT buckets, seconds: 5 ms to 60 s, the range a prefix-cache study spans from a hit to a cold long prompt. */
const TTFT_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** ITL buckets, seconds: 1 ms to 5 s. */
const ITL_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 5];

class Histogram {
  readonly counts: number[];
  count = 0;
  sum = 0;
  constructor(readonly bounds: readonly number[]) {
    this.counts = bounds.map(() => 0);
  }
  observe(v: number): void {
    this.count++;
    this.sum += v;
    for (let i = 0; i < this.bounds.length; i++) if (v <= this.bounds[i]!) this.counts[i]!++;
  }
  lines(name: string): string[] {
    return [
      ...this.bounds.map((b, i) => `${name}_bucket{le="${b}"} ${this.counts[i]}`),
      `${name}_bucket{le="+Inf"} ${this.count}`,
      `${name}_sum ${this.sum}`,
      `${name}_count ${this.count}`,
    ];
  }
}

/** The exporter's figures since the run started. */
class LiveMetrics implements LiveFeed {
  sentTotal = 0;
  finishedTotal = 0;
  failedTotal = 0;
  promptTokens = 0;
  outputTokens = 0;
  cachedTokens = 0;
  currentPoint = "";
  readonly ttft = new Histogram(TTFT_BUCKETS_S);
  readonly itl = new Histogram(ITL_BUCKETS_S);

  point(label: string): void {
    this.currentPoint = label;
  }
  sent(): void {
    this.sentTotal++;
  }
  settled(r: RequestRecord): void {
    if (!r.ok) {
      this.failedTotal++;
      return;
    }
    this.finishedTotal++;
    this.promptTokens += r.promptLen;
    this.outputTokens += r.outputLen;
    if (r.cachedTokens > 0) this.cachedTokens += r.cachedTokens;
    this.ttft.observe(r.ttftMs / 1000);
    for (const gap of r.itlMs) this.itl.observe(gap / 1000);
  }

  /** The exposition text (0.0.4). */
  text(): string {
    const out: string[] = [];
    const metric = (name: string, type: string, help: string, values: string[]): void => {
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...values);
    };
    const one = (name: string, type: string, help: string, value: number): void => metric(name, type, help, [`${name} ${value}`]);
    one("warmbench_requests_sent_total", "counter", "Measured requests sent.", this.sentTotal);
    one("warmbench_requests_finished_total", "counter", "Measured requests that completed.", this.finishedTotal);
    one("warmbench_requests_failed_total", "counter", "Measured requests that failed.", this.failedTotal);
    one("warmbench_requests_in_flight", "gauge", "Measured requests sent and not yet ended.", this.sentTotal - this.finishedTotal - this.failedTotal);
    one("warmbench_prompt_tokens_total", "counter", "Prompt tokens of the completed requests.", this.promptTokens);
    one("warmbench_output_tokens_total", "counter", "Output tokens of the completed requests.", this.outputTokens);
    one("warmbench_cached_tokens_total", "counter", "Cached prompt tokens the server reported for the completed requests.", this.cachedTokens);
    metric("warmbench_ttft_seconds", "histogram", "Time to first token of the completed requests.", this.ttft.lines("warmbench_ttft_seconds"));
    metric("warmbench_itl_seconds", "histogram", "Inter-token gaps of the completed requests.", this.itl.lines("warmbench_itl_seconds"));
    const label = this.currentPoint.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n");
    metric("warmbench_point_info", "gauge", "The point now running (its progress label).", [`warmbench_point_info{point="${label}"} 1`]);
    return out.join("\n") + "\n";
  }
}

/** How long the exporter waits after the run for a scrape that sees its final figures. */
const LINGER_MS = 3000;

/** The exporter, listening; stop() closes it and stops the feed. */
export interface MetricsExporter {
  url: string;
  metrics: LiveMetrics;
  stop(): Promise<void>;
}

/** Listens on `address` (port 0: a free one) and feeds every point's requests into it until stopped. */
export function serveMetrics(address: { host: string; port: number }): MetricsExporter {
  const metrics = new LiveMetrics();
  /** Set once the run has ended: the next scrape, which sees the final figures, lets the exporter go. */
  let stopping: (() => void) | null = null;
  const server = Bun.serve({
    hostname: address.host,
    port: address.port,
    fetch(req) {
      if (new URL(req.url).pathname !== "/metrics") return new Response("not found\n", { status: 404 });
      // Let the answer go out before the exporter closes.
      if (stopping !== null) setTimeout(stopping, 100);
      return new Response(metrics.text(), { headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" } });
    },
  });
  feedLiveMetrics(metrics);
  const host = address.host.includes(":") ? `[${address.host}]` : address.host;
  return {
    url: `http://${host}:${server.port}`,
    metrics,
    async stop() {
      feedLiveMetrics(null);
      // The run's last figures are seen by one more scrape (a scraper every few seconds), or after LINGER_MS, whichever is first.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, LINGER_MS);
        stopping = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      await server.stop(true);
    },
  };
}
