/**
 * The telemetry's pure parts: Prometheus text into families (labels with escapes, a counter declared with or without
 * `_total`, histograms' suffixes), each dialect's reading of them (vLLM's two KV-usage spellings, SGLang's per-tier
 * cached tokens without the total, llama.cpp's computed + cached prompt tokens), the reconciliation's rounding, and
 * the series' buckets (the client timeline's own).
 */
import { describe, expect, test } from "bun:test";
import { parsePrometheusText, sumSamples } from "../../../src/metrics/telemetry-prometheus-text.ts";
import { readSnapshot } from "../../../src/metrics/telemetry-dialects.ts";
import { reconcile } from "../../../src/metrics/telemetry-reconcile.ts";
import { telemetrySeries, telemetrySummary } from "../../../src/metrics/telemetry-series.ts";
import { decodeSeries } from "../../../src/metrics/timeline-codec.ts";
import { timelineData } from "../../../src/metrics/timeline.ts";
import { makeRecord } from "../../helpers/record.ts";

describe("Prometheus text", () => {
  test("families, labels with escapes and braces, suffixes, values", () => {
    const f = parsePrometheusText(
      [
        "# HELP vllm:prompt_tokens Number of prefill tokens processed.",
        "# TYPE vllm:prompt_tokens counter",
        'vllm:prompt_tokens_total{engine="0",model_name="a \\"b\\" {c}"} 12.0',
        'vllm:prompt_tokens_total{engine="1",model_name="a"} 3 1700000000000',
        "# TYPE sglang:ttft histogram",
        'sglang:ttft_bucket{le="0.1"} 2',
        'sglang:ttft_bucket{le="+Inf"} 5',
        "sglang:ttft_sum 1.5",
        "sglang:ttft_count 5",
        "untyped_thing NaN",
        "not a sample line at all {",
      ].join("\n"),
    );
    const prompt = f.get("vllm:prompt_tokens")!;
    expect(prompt.type).toBe("counter");
    expect(prompt.samples.map((s) => [s.labels.model_name, s.value])).toEqual([
      ['a "b" {c}', 12],
      ["a", 3],
    ]);
    expect(sumSamples(prompt)).toBe(15);
    const h = f.get("sglang:ttft")!;
    expect(h.samples).toHaveLength(4);
    expect(sumSamples(h, "sglang:ttft_count")).toBe(5);
    expect(sumSamples(f.get("untyped_thing"))).toBeNull();
    expect(f.has("not")).toBe(false);
  });
});

describe("dialects", () => {
  test("vLLM: kv_cache_usage_perc, else the older gpu_cache_usage_perc; counters declared as x_total or x", () => {
    const now = readSnapshot(parsePrometheusText('# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{engine="0"} 0.25\n'))!;
    expect(now).toMatchObject({ dialect: "vllm", kvUsage: 0.25, requests: null });
    const old = readSnapshot(
      parsePrometheusText(
        "# TYPE vllm:gpu_cache_usage_perc gauge\nvllm:gpu_cache_usage_perc 0.5\n# TYPE vllm:request_success_total counter\n" +
          'vllm:request_success_total{finished_reason="stop"} 3\nvllm:request_success_total{finished_reason="length"} 4\n',
      ),
    )!;
    expect(old).toMatchObject({ kvUsage: 0.5, requests: 7 });
  });

  test("SGLang: cached tokens summed over the tiers, the total series left out", () => {
    const s = readSnapshot(
      parsePrometheusText(
        '# TYPE sglang:cached_tokens_total counter\nsglang:cached_tokens_total{cache_source="device"} 10\nsglang:cached_tokens_total{cache_source="host"} 5\n' +
          'sglang:cached_tokens_total{cache_source="total"} 15\nsglang:num_queue_reqs 2\nsglang:token_usage 0.4\n',
      ),
    )!;
    expect(s).toMatchObject({ dialect: "sglang", cachedTokens: 15, waiting: 2, kvUsage: 0.4, promptTokens: null });
    expect(s.cachedTokensByTier).toEqual({ device: 10, host: 5, storage: null });
  });

  test("SGLang: a storage backend's series (storage_<Backend>) is the storage tier; unlabelled cached tokens have no tiers", () => {
    const s = readSnapshot(
      parsePrometheusText(
        'sglang:cached_tokens_total{cache_source="device"} 4\nsglang:cached_tokens_total{cache_source="storage_file"} 3\n' +
          'sglang:cached_tokens_total{cache_source="storage_mooncake"} 2\n',
      ),
    )!;
    expect([s.cachedTokens, s.cachedTokensByTier]).toEqual([9, { device: 4, host: null, storage: 5 }]);
    expect(readSnapshot(parsePrometheusText("sglang:cached_tokens_total 9\n"))!.cachedTokensByTier).toBeNull();
  });

  test("llama.cpp: prompt tokens are the computed plus the cached; no request counter, no KV usage", () => {
    const s = readSnapshot(parsePrometheusText("llamacpp:prompt_tokens_total 70\nllamacpp:prompt_tokens_cached_total 30\nllamacpp:requests_deferred 1\n"))!;
    expect(s).toMatchObject({ dialect: "llamacpp", promptTokens: 100, cachedTokens: 30, waiting: 1, requests: null, kvUsage: null });
    expect(readSnapshot(parsePrometheusText("process_cpu_seconds_total 3\n"))).toBeNull();
  });
});

describe("reconciliation", () => {
  const snap = (promptTokens: number, cachedTokens: number, requests: number | null) =>
    readSnapshot(
      parsePrometheusText(
        `sglang:prompt_tokens_total ${promptTokens}\nsglang:cached_tokens_total ${cachedTokens}\n${requests === null ? "" : `sglang:num_requests_total ${requests}\n`}`,
      ),
    )!;
  const records = [
    makeRecord({ index: 0, promptLen: 100, cachedTokens: 60 }),
    makeRecord({ index: 1, promptLen: 100, cachedTokens: 40 }),
    makeRecord({ index: 2, ok: false, promptLen: 100 }),
  ];

  test("agrees within half a token; beyond it a finding with both figures; a counter not exposed has no row", () => {
    const rows = reconcile([{ replica: null, url: "u", before: snap(1000, 500, 10), after: snap(1200.4, 599, 12), records }]);
    expect(rows.map((r) => [r.counter, r.server, r.client, r.agrees])).toEqual([
      ["prompt_tokens", 200.4000000000001, 200, true],
      ["cached_tokens", 99, 100, false],
      ["requests", 2, 2, true],
    ]);
    expect(reconcile([{ replica: 0, url: "u", before: snap(0, 0, null), after: snap(200, 100, null), records }]).map((r) => r.counter)).toEqual([
      "prompt_tokens",
      "cached_tokens",
    ]);
    // The server reported no cached_tokens to the client: nothing to hold its counter to.
    const unreported = [makeRecord({ index: 0, promptLen: 100, cachedTokens: -1 })];
    expect(reconcile([{ replica: null, url: "u", before: snap(0, 0, 0), after: snap(100, 0, 1), records: unreported }]).map((r) => r.counter)).toEqual([
      "prompt_tokens",
      "requests",
    ]);
  });
});

describe("series", () => {
  test("in the client timeline's buckets: each bucket the mean of its scrapes; the summaries", () => {
    // Two requests over 0-1000 ms: the timeline's 100 buckets of 10 ms.
    const records = [
      makeRecord({ index: 0, startMs: 0, latencyMs: 1000, lastEventMs: 1000 }),
      makeRecord({ index: 1, startMs: 0, latencyMs: 500, lastEventMs: 500 }),
    ];
    const at = (atMs: number, waiting: number, kv: number) => ({
      atMs,
      snapshot: readSnapshot(
        parsePrometheusText(`sglang:num_queue_reqs ${waiting}\nsglang:token_usage ${kv}\nsglang:num_retracted_requests_total ${atMs / 100}\n`),
      ),
    });
    const scrapes = [at(-50, 9, 0.1), at(5, 2, 0.2), at(6, 4, 0.3), at(955, 1, 0.6)];
    const s = telemetrySeries([{ url: "u", scrapes, failed: 1 }], records)!;
    const timeline = timelineData(records)!;
    expect([s.bucket_s, s.buckets]).toEqual([timeline.bucket_s, timeline.started.length]);
    expect([s.bucket_s, s.buckets]).toEqual([0.01, 100]);
    const waiting = decodeSeries(s.replicas[0]!.waiting, 0.1);
    expect([waiting[0], waiting[95], waiting.filter((v) => v !== null).length]).toEqual([3, 1, 2]);
    const kv = decodeSeries(s.replicas[0]!.kv_usage_pct, 0.1);
    expect([kv[0], kv[95]]).toEqual([25, 60]);
    expect(s.replicas[0]).toMatchObject({ scrapes_ok: 4, scrapes_failed: 1, dialect: "sglang" });
    const sum = telemetrySummary([{ url: "u", scrapes, failed: 0 }], { fromMs: 0, toMs: 1000 }, 2);
    // The peak over every scrape of the point; the queue over the measured window; retractions first to last, per request.
    expect(sum).toEqual({ kvUsagePeak: 0.6, queueMean: 7 / 3, preemptionsPerRequest: (9.55 + 0.5) / 2 });
  });
});
