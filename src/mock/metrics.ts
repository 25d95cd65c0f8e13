/**
 * GET /metrics: Prometheus text with the counters and gauges a prefix-cache study reads and the telemetry study
 * scrapes, in SGLang's dialect (beside vLLM's names, as warmbench 0.1's mock) or vLLM's alone (docs/protocol.md §2.2,
 * §3.3 and "Server telemetry"). Counted when a request finishes prefill, warm requests included; the counters are
 * exact unless --fault-metrics-undercount makes the cached-token counter lie.
 */

import type { CacheHit } from "./tiered-cache.ts";

/** What the metrics need of the server: its personality, the undercount fault, and the KV cache's usage now (0-1). */
export interface MetricsSettings {
  personality: string;
  faultMetricsUndercount: number;
}

/** Token counters since the server started (flushes do not reset them, as Prometheus counters). */
export class MockMetrics {
  constructor(
    readonly settings: MetricsSettings = { personality: "sglang", faultMetricsUndercount: 0 },
    /** The KV cache's usage now, 0-1 (held tokens over capacity). */
    readonly kvUsage: () => number = () => 0,
  ) {}
  /** Requests whose prefill finished (the mock answers every one it prefills). */
  requests = 0;
  promptTokens = 0;
  /** Cached prompt tokens, all tiers. */
  cachedTokens = 0;
  /** Of those, loaded back from the host tier. */
  hostCachedTokens = 0;
  generationTokens = 0;

  /** A request finished prefill: `promptTokens` queried, `hit` of them from the cache tiers. */
  countPrefill(promptTokens: number, hit: CacheHit): void {
    this.requests += 1;
    this.promptTokens += promptTokens;
    // The fault leaves a share of each hit out of the counter (host hits first), as a server that under-reports.
    const left = Math.floor((hit.tokens * this.settings.faultMetricsUndercount) / 100);
    this.cachedTokens += hit.tokens - left;
    this.hostCachedTokens += Math.max(0, hit.hostTokens - left);
  }

  /** `tokens` more output tokens were generated. */
  countGenerated(tokens: number): void {
    this.generationTokens += tokens;
  }
}

/** Live gauges shown next to the counters. */
export interface MetricsGauges {
  running: number;
  queued: number;
}

/** Prometheus exposition text (version 0.0.4), floats written as prometheus_client does ("12.0"). */
export function renderMetrics(metrics: MockMetrics, gauges: MetricsGauges, modelName: string): string {
  const model = `model_name="${modelName.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
  const vllm = `engine="0",${model}`;
  const lines: string[] = [];
  const add = (name: string, type: "counter" | "gauge", help: string, labels: string, value: number): void => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name}{${labels}} ${Number.isInteger(value) ? value.toFixed(1) : String(value)}`);
  };
  const sglang = metrics.settings.personality !== "vllm";
  if (sglang) renderSglang(add, lines, metrics, gauges, model);
  add("vllm:prefix_cache_queries_total", "counter", "Prefix cache queries, in terms of number of queried tokens.", vllm, metrics.promptTokens);
  add("vllm:prefix_cache_hits_total", "counter", "Prefix cache hits, in terms of number of cached tokens.", vllm, metrics.cachedTokens);
  add("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", vllm, metrics.promptTokens);
  add("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.", vllm, metrics.generationTokens);
  add("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", vllm, gauges.running);
  add("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", vllm, gauges.queued);
  add("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", vllm, Math.min(1, metrics.kvUsage()));
  add("vllm:num_preemptions_total", "counter", "Cumulative number of preemption from the engine.", vllm, 0);
  add("vllm:request_success_total", "counter", "Count of successfully processed requests.", `${vllm},finished_reason="length"`, metrics.requests);
  return lines.join("\n") + "\n";
}

type Add = (name: string, type: "counter" | "gauge", help: string, labels: string, value: number) => void;

/** SGLang's families (python/sglang/srt/metrics/collector.py): tokens, requests, usage, queue, retractions. */
function renderSglang(add: Add, lines: string[], metrics: MockMetrics, gauges: MetricsGauges, model: string): void {
  add("sglang:prompt_tokens_total", "counter", "Number of prefill tokens processed.", model, metrics.promptTokens);
  add("sglang:generation_tokens_total", "counter", "Number of generation tokens processed.", model, metrics.generationTokens);
  // One series per tier, as SGLang >= 0.5.10 labels them; readers sum the series (skipping cache_source="total").
  add(
    "sglang:cached_tokens_total",
    "counter",
    "Number of cached prompt tokens.",
    `cache_source="device",${model}`,
    metrics.cachedTokens - metrics.hostCachedTokens,
  );
  if (metrics.hostCachedTokens > 0) lines.push(`sglang:cached_tokens_total{cache_source="host",${model}} ${metrics.hostCachedTokens.toFixed(1)}`);
  add("sglang:num_running_reqs", "gauge", "The number of running requests.", model, gauges.running);
  add("sglang:num_queue_reqs", "gauge", "The number of requests in the waiting queue.", model, gauges.queued);
  add("sglang:token_usage", "gauge", "The token usage.", model, Math.min(1, metrics.kvUsage()));
  add("sglang:num_requests_total", "counter", "Number of requests processed.", model, metrics.requests);
  add("sglang:num_retracted_requests_total", "counter", "Total number of retracted requests.", model, 0);
}
