/**
 * Prefix-cache counters scraped from a server's Prometheus /metrics, for the run-level hit rate from counter
 * deltas. Counters, not SGLang's cache_hit_rate gauge, which only reflects the last prefill batch.
 */
import { controlBodyLimit, mib, readCapped, type Control } from "../backends/http.ts";
import { deadlineSignal } from "../interrupt.ts";
import { log } from "../log.ts";

/** Hit and query token counters; null when the server exposes neither family. */
export interface CacheCounters {
  hitTokens: number;
  queryTokens: number;
  source: "sglang" | "vllm" | "llamacpp";
}

/** Sums every sample of a metric family (all label sets) from Prometheus text. */
export function sumMetric(text: string, name: string): number | null {
  let found = false;
  let total = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== " " && rest[0] !== "{") continue;
    // SGLang adds cache_source="total" next to the per-tier series: skip it so nothing counts twice.
    if (rest.includes('cache_source="total"')) continue;
    // The value follows the labels (whose values may hold spaces and braces); an optional timestamp follows it.
    const valueText = rest[0] === "{" ? rest.slice(rest.lastIndexOf("}") + 1) : rest;
    const value = Number(valueText.trim().split(" ")[0]);
    if (Number.isFinite(value)) {
      total += value;
      found = true;
    }
  }
  return found ? total : null;
}

/** Reads the cache counters from Prometheus text (SGLang first, then vLLM, then llama.cpp). */
export function parseCacheCounters(text: string): CacheCounters | null {
  const sgHit = sumMetric(text, "sglang:cached_tokens_total");
  const sgAll = sumMetric(text, "sglang:prompt_tokens_total");
  if (sgHit !== null && sgAll !== null) return { hitTokens: sgHit, queryTokens: sgAll, source: "sglang" };
  const vHit = sumMetric(text, "vllm:prefix_cache_hits_total");
  const vAll = sumMetric(text, "vllm:prefix_cache_queries_total");
  if (vHit !== null && vAll !== null) return { hitTokens: vHit, queryTokens: vAll, source: "vllm" };
  // llama.cpp (--metrics) counts computed prompt tokens without the cached ones.
  const lHit = sumMetric(text, "llamacpp:prompt_tokens_cached_total");
  const lComputed = sumMetric(text, "llamacpp:prompt_tokens_total");
  if (lHit !== null && lComputed !== null) return { hitTokens: lHit, queryTokens: lHit + lComputed, source: "llamacpp" };
  return null;
}

/**
 * GET /metrics; null when the endpoint is missing (SGLang without --enable-metrics), unreachable, interrupted, or its
 * answer is over controlBodyLimit(ctl) (warned once per scrape).
 */
export async function scrapeCacheCounters(ctl: Control): Promise<CacheCounters | null> {
  try {
    const init: RequestInit = { headers: ctl.headers, signal: deadlineSignal(ctl.signal, 10_000) };
    if (ctl.freshConnections === true) init.keepalive = false;
    const res = await fetch(`${ctl.baseUrl}/metrics`, init);
    if (!res.ok) {
      await res.body?.cancel();
      return null;
    }
    const limit = controlBodyLimit(ctl);
    const read = await readCapped(res, limit);
    if (read.over) {
      // The run goes on without the counters (as without /metrics); memory stays within the limit.
      log.warn(`/metrics answered more than ${mib(limit)}, the most warmbench reads from a control endpoint: cache counters unknown`);
      return null;
    }
    return parseCacheCounters(new TextDecoder().decode(read.bytes));
  } catch {
    return null;
  }
}

/** Hit rate between two scrapes; null when unknown or nothing was queried. */
export function hitRateBetween(before: CacheCounters | null, after: CacheCounters | null): number | null {
  if (!before || !after || before.source !== after.source) return null;
  const queries = after.queryTokens - before.queryTokens;
  // A flush resets SGLang's scheduler metrics; a negative delta means the counters restarted.
  if (queries <= 0 || after.hitTokens < before.hitTokens) return null;
  return (after.hitTokens - before.hitTokens) / queries;
}
