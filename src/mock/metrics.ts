/**
 * GET /metrics: Prometheus text with the counters a prefix-cache study reads, under both SGLang's and
 * vLLM's names (docs/protocol.md §2.2, §3.3). Counted when a request finishes prefill, warm requests included.
 */

import type { CacheHit } from "./tiered-cache.ts";

/** Token counters since the server started (flushes do not reset them, as Prometheus counters). */
export class MockMetrics {
  promptTokens = 0;
  /** Cached prompt tokens, all tiers. */
  cachedTokens = 0;
  /** Of those, loaded back from the host tier. */
  hostCachedTokens = 0;
  generationTokens = 0;

  /** A request finished prefill: `promptTokens` queried, `hit` of them from the cache tiers. */
  countPrefill(promptTokens: number, hit: CacheHit): void {
    this.promptTokens += promptTokens;
    this.cachedTokens += hit.tokens;
    this.hostCachedTokens += hit.hostTokens;
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
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name}{${labels}} ${value.toFixed(1)}`);
  };
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
  add("vllm:prefix_cache_queries_total", "counter", "Prefix cache queries, in terms of number of queried tokens.", vllm, metrics.promptTokens);
  add("vllm:prefix_cache_hits_total", "counter", "Prefix cache hits, in terms of number of cached tokens.", vllm, metrics.cachedTokens);
  add("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", vllm, metrics.promptTokens);
  add("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.", vllm, metrics.generationTokens);
  return lines.join("\n") + "\n";
}
