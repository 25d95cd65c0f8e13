import { describe, expect, test } from "bun:test";
import { hitRateBetween, parseCacheCounters, scrapeCacheCounters, sumMetric } from "../../../src/client/prometheus.ts";

const SGLANG = `# HELP sglang:prompt_tokens_total Number of prefill tokens processed.
# TYPE sglang:prompt_tokens_total counter
sglang:prompt_tokens_total{model_name="m",is_streaming="true"} 1000.0
sglang:prompt_tokens_total{model_name="m",is_streaming="false"} 500.0
# TYPE sglang:cached_tokens_total counter
sglang:cached_tokens_total{cache_source="device",model_name="m"} 600.0
sglang:cached_tokens_total{cache_source="host",model_name="m"} 100.0
sglang:cached_tokens_total{cache_source="total",model_name="m"} 700.0
sglang:cache_hit_rate{model_name="m"} 0.0
`;
const VLLM = `vllm:prefix_cache_queries_total{engine="0",model_name="m"} 2048.0
vllm:prefix_cache_hits_total{engine="0",model_name="m"} 1024.0
vllm:prefix_cache_hits_created{engine="0",model_name="m"} 1.7e9
`;

describe("prometheus cache counters", () => {
  test("sums label sets, skipping SGLang's total series and similar names", () => {
    expect(sumMetric(SGLANG, "sglang:prompt_tokens_total")).toBe(1500);
    expect(sumMetric(SGLANG, "sglang:cached_tokens_total")).toBe(700);
    expect(sumMetric(SGLANG, "sglang:nope")).toBeNull();
    expect(sumMetric(VLLM, "vllm:prefix_cache_hits_total")).toBe(1024);
  });
  test("SGLang and vLLM families", () => {
    expect(parseCacheCounters(SGLANG)).toEqual({ hitTokens: 700, queryTokens: 1500, source: "sglang" });
    expect(parseCacheCounters(VLLM)).toEqual({ hitTokens: 1024, queryTokens: 2048, source: "vllm" });
    expect(parseCacheCounters("up 1\n")).toBeNull();
  });
  test("one counter of a pair is not enough", () => {
    const [queries, hits] = VLLM.split("\n");
    expect(parseCacheCounters(`${hits}\n`)).toBeNull();
    expect(parseCacheCounters(`${queries}\n`)).toBeNull();
    const sglangHitsOnly = SGLANG.split("\n")
      .filter((l) => !l.includes("prompt_tokens"))
      .join("\n");
    expect(parseCacheCounters(sglangHitsOnly + VLLM)).toEqual({ hitTokens: 1024, queryTokens: 2048, source: "vllm" });
  });
  test("hit rate from deltas; restarted counters give null", () => {
    const a = { hitTokens: 100, queryTokens: 1000, source: "vllm" as const };
    const b = { hitTokens: 600, queryTokens: 2000, source: "vllm" as const };
    expect(hitRateBetween(a, b)).toBe(0.5);
    expect(hitRateBetween(b, a)).toBeNull();
    expect(hitRateBetween(null, b)).toBeNull();
  });
});

describe("scrapeCacheCounters: GET /metrics", () => {
  test("reads the counters, sending the given headers; an error status or an unreachable server is null", async () => {
    const seen: { path: string; authorization: string | null }[] = [];
    let status = 200;
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req) {
        seen.push({ path: new URL(req.url).pathname, authorization: req.headers.get("authorization") });
        // Even an error page that happens to hold counter lines is not read.
        return new Response(VLLM, { status });
      },
    });
    const url = `http://127.0.0.1:${server.port}`;
    try {
      expect(await scrapeCacheCounters({ baseUrl: url, headers: { authorization: "Bearer k" } })).toEqual({
        hitTokens: 1024,
        queryTokens: 2048,
        source: "vllm",
      });
      expect(seen).toEqual([{ path: "/metrics", authorization: "Bearer k" }]);
      for (status of [404, 500]) expect(await scrapeCacheCounters({ baseUrl: url, headers: {} })).toBeNull();
      expect(seen[1]?.authorization).toBeNull();
    } finally {
      await server.stop(true);
    }
    expect(await scrapeCacheCounters({ baseUrl: url, headers: {} })).toBeNull();
  });
});
