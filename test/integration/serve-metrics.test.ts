/**
 * --serve-metrics against a real Prometheus (Debian's, provisioned by the test command): warmbench's exporter fed by
 * a sweep's requests (the telemetry study's live feed), scraped every second by Prometheus on a free loopback port;
 * its HTTP query API returns the run's finished-request counter equal to the line's `completed`, and the exposition
 * parses as Prometheus text with the families the guide names.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { parseRunOptions } from "../../src/cli/options.ts";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { openSweepSink } from "../../src/output/sweep-sink.ts";
import { serveMetrics } from "../../src/output/serve-metrics.ts";
import { parsePrometheusText } from "../../src/metrics/telemetry-prometheus-text.ts";
import { runSweep } from "../../src/sweep/run-sweep.ts";
import { parseMultiturnOptions } from "../../src/cli/multiturn-options.ts";
import { runMultiturn } from "../../src/multiturn/run-multiturn.ts";
import { openMultiturnSink } from "../../src/output/multiturn-sink.ts";
import { startPrometheus, type PrometheusServer } from "../helpers/prometheus.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";
import { readJsonl } from "../helpers/results.ts";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

let mock: MockServer | null = null;
let prometheus: PrometheusServer | null = null;
afterAll(async () => {
  await prometheus?.stop();
  await mock?.stop();
});

/** A loopback port nothing listens on now (the binary listens there next). */
function freePort(): number {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  const port = probe.port;
  probe.stop(true);
  return port!;
}

describe("--serve-metrics", () => {
  test("a real Prometheus scrapes the compiled binary's 20 s run: its finished-request counter is the line's completed", async () => {
    // An open loop for 20 s, 5 requests a second, each answered over ~0.8 s (40 tokens 20 ms apart): about 100
    // requests, a few in flight at every one of Prometheus's 1 s scrapes.
    mock = await startMockServer(mockOptions({ port: 0, ttftBaseMs: 1, itlMs: 20, vocabSize: 32000 }));
    const port = freePort();
    prometheus = await startPrometheus(`127.0.0.1:${port}`);
    // Prometheus hands its targets to the scrape loop a few seconds after it is ready (discovery is throttled to 5 s):
    // the run starts once that loop is scraping, its `up` written (0: nothing listens there yet), so all of it is seen.
    for (const deadline = performance.now() + 15_000; (await prometheus.value('up{job="warmbench"}')) === null; await Bun.sleep(100)) {
      if (performance.now() > deadline) throw new Error("Prometheus never scraped the target's address");
    }
    const dir = mkdtempSync(join(tmpdir(), "warmbench-serve-metrics-"));
    const out = join(dir, "run.jsonl");
    const r = await runCli(
      ["--model", LLAMA2_TOKENIZER, "--base-url", mock.url, "--pcts", "0", "--request-rate", "5", "--duration", "20", "--total-tokens", "200"]
        .concat(["--output-len", "40", "--max-concurrency", "16", "--settle", "0", "--seed", "3", "--quiet", "--output-file", out])
        .concat(["--serve-metrics", `127.0.0.1:${port}`]),
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`Serving warmbench's metrics at http://127.0.0.1:${port}/metrics`);
    const lines = readJsonl(out);
    expect(lines).toHaveLength(1);
    const line = lines[0];
    expect(line.duration_limit_s).toBe(20);
    // The arrivals span the 20 s (the last one due near its end), and every request sent finished.
    expect(line.benchmark_duration).toBeGreaterThanOrEqual(19);
    expect([line.sent, line.failed]).toEqual([line.num_prompts, 0]);
    const completed = line.completed as number;
    expect(completed).toBe(line.sent);
    expect(completed).toBeGreaterThanOrEqual(60);
    // The exporter answered one more scrape after the run (its final figures) before the process ended; the target is
    // gone now, so its series are read over the last minutes (a range skips the staleness markers).
    expect(await prometheus.value('max_over_time(warmbench_requests_finished_total{job="warmbench"}[5m])')).toBe(completed);
    expect(await prometheus.value("last_over_time(warmbench_requests_in_flight[5m])")).toBe(0);
    expect(await prometheus.value("max_over_time(warmbench_ttft_seconds_count[5m])")).toBe(completed);
    // Prometheus scraped the run throughout, not only its end: a sample a second over its 20 s (21 seen; one may be late).
    expect(await prometheus.value('count_over_time(warmbench_requests_finished_total{job="warmbench"}[5m])')).toBeGreaterThanOrEqual(19);
    expect(await prometheus.value("max_over_time(warmbench_requests_in_flight[5m])")).toBeGreaterThan(0);
  }, 60_000);

  test("the exposition parses as Prometheus text with the families the guide names", async () => {
    mock ??= await startMockServer(mockOptions({ port: 0, ttftBaseMs: 1, itlMs: 20, vocabSize: 32000 }));
    const exporter = serveMetrics({ host: "127.0.0.1", port: 0 });
    try {
      const opts = parseRunOptions({
        model: LLAMA2_TOKENIZER,
        "base-url": mock.url,
        pcts: "0",
        "num-prompts": "4",
        "total-tokens": "200",
        "output-len": "4",
        settle: "0",
        quiet: true,
      });
      await runSweep(opts, { sink: openSweepSink(opts, () => {}) });
      const families = parsePrometheusText(exporter.metrics.text());
      expect(families.get("warmbench_ttft_seconds")?.type).toBe("histogram");
      expect(families.get("warmbench_point_info")?.samples[0]?.labels.point).toBeTruthy();
      expect(exporter.metrics.sentTotal).toBe(4);
    } finally {
      await exporter.stop();
    }
  }, 60_000);

  test("a multi-turn run's turns feed it too: sent and finished are every turn, the point each round", async () => {
    mock ??= await startMockServer(mockOptions({ port: 0, ttftBaseMs: 1, itlMs: 20, vocabSize: 32000 }));
    const exporter = serveMetrics({ host: "127.0.0.1", port: 0 });
    try {
      const opts = parseMultiturnOptions({
        model: LLAMA2_TOKENIZER,
        "base-url": mock.url,
        "num-clients": "3",
        "num-rounds": "2",
        "turn-tokens": "32",
        "output-len": "4",
        settle: "0",
        quiet: true,
      });
      const outcome = await runMultiturn(opts, { sink: openMultiturnSink(opts, () => {}) });
      expect(outcome.rounds.map((r) => r.completed)).toEqual([3, 3]);
      expect(exporter.metrics.sentTotal).toBe(6);
      const families = parsePrometheusText(exporter.metrics.text());
      expect(families.get("warmbench_requests_finished_total")?.samples[0]?.value).toBe(6);
      expect(families.get("warmbench_point_info")?.samples[0]?.labels.point).toBe("round 1");
    } finally {
      await exporter.stop();
    }
  }, 60_000);

  test("an address that cannot be listened on is exit 2 naming the flag, before anything is sent", async () => {
    const busy = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
    try {
      const r = await runCli(["--model", LLAMA2_TOKENIZER, "--base-url", "http://127.0.0.1:9", "--serve-metrics", `127.0.0.1:${busy.port}`]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/--serve-metrics 127\.0\.0\.1:\d+: cannot listen there/);
      const bad = await runCli(["--model", LLAMA2_TOKENIZER, "--base-url", "http://127.0.0.1:9", "--serve-metrics", "nowhere:port"]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--serve-metrics "nowhere:port": expected HOST:PORT');
    } finally {
      busy.stop(true);
    }
  });
});
