import { describe, expect, test } from "bun:test";
import { judgePair } from "../../../src/compare/judge.ts";
import { combineLimits, parseLimits } from "../../../src/compare/limits.ts";
import { COMPARE_METRICS } from "../../../src/compare/metrics.ts";
import { describeDifference, pairLines } from "../../../src/compare/pairing.ts";
import { encodeHistogram, histogramOfMs } from "../../../src/metrics/histograms.ts";
import type { WorkloadFingerprint } from "../../../src/schema/nested.ts";
import type { StoredSweepLine } from "../../../src/metrics/sweep-line.ts";

const fingerprint = (pct: number, over: Partial<WorkloadFingerprint> = {}): WorkloadFingerprint => ({
  backend: "sglang",
  tokenizer_sha256: "a".repeat(64),
  vocab_size: 32000,
  total_tokens: 1000,
  output_len: 8,
  ignore_eos: true,
  num_prompts: 4,
  max_concurrency: 2,
  seed: "42",
  shared_prefix_pct: pct,
  prompt_ids_hash: "0123456789abcdef",
  ...over,
});

/** A pct line with the given TTFT samples (ms) in its histogram and summary numbers. */
function line(pct: number, ttftsMs: number[], over: Record<string, unknown> = {}): StoredSweepLine {
  const h = encodeHistogram(histogramOfMs(ttftsMs));
  return {
    shared_prefix_pct: pct,
    mean_ttft_ms: ttftsMs.reduce((a, b) => a + b, 0) / ttftsMs.length,
    median_ttft_ms: 0,
    p90_ttft_ms: 0,
    p99_ttft_ms: 0,
    mean_itl_ms: 10,
    mean_tpot_ms: 10,
    mean_e2e_latency_ms: 100,
    output_throughput: 1000,
    request_throughput: 10,
    total_throughput: 2000,
    hdr: { ttft_us: h, tpot_us: h, itl_us: h, e2e_latency_us: h },
    workload: fingerprint(pct),
    ...over,
  } as unknown as StoredSweepLine;
}

const row = (rows: ReturnType<typeof judgePair>, metric: string) => rows.find((r) => r.metric === metric)!;

describe("judgePair", () => {
  const base = line(50, [100, 100, 100, 100]);
  test("a latency 20 % higher beyond a 5 % limit regresses; the better side is named", () => {
    const rows = judgePair({ pct: 50, label: "50%", base, next: line(50, [120, 120, 120, 120]), differences: [] }, parseLimits("mean_ttft_ms=5%"));
    expect(row(rows, "mean_ttft_ms")).toMatchObject({
      base: 100,
      next: 120,
      delta: 20,
      deltaPct: 20,
      betterSide: "base",
      limitPct: 5,
      verdict: "REGRESSED",
      source: "line",
    });
    // One key, one definition: a percentile the line holds is its own (numpy's, what gates read) ...
    expect(row(rows, "p99_ttft_ms")).toMatchObject({ source: "line", base: 0, next: 0 });
    // ... and only one it does not hold comes from the histograms (3 significant digits).
    expect(row(rows, "p999_ttft_ms")).toMatchObject({ source: "hdr", betterSide: "base", limitPct: null, verdict: "worse" });
    expect(row(rows, "p999_ttft_ms").base).toBeCloseTo(100, 0);
    expect(row(rows, "p999_ttft_ms").next).toBeCloseTo(120, 0);
  });

  test("within the limit is ok, an improvement is better, equal is same", () => {
    const limits = parseLimits("mean_ttft_ms=25%,output_throughput=5%,mean_itl_ms=1%");
    const rows = judgePair({ pct: 50, label: "50%", base, next: line(50, [120, 120, 120, 120], { output_throughput: 1100 }), differences: [] }, limits);
    expect(row(rows, "mean_ttft_ms").verdict).toBe("ok");
    expect(row(rows, "output_throughput")).toMatchObject({ deltaPct: 10, betterSide: "new", verdict: "better" });
    expect(row(rows, "mean_itl_ms")).toMatchObject({ delta: 0, betterSide: "=", verdict: "same" });
  });

  test("throughput regresses when it falls", () => {
    const rows = judgePair(
      { pct: 50, label: "50%", base, next: line(50, [100], { output_throughput: 900 }), differences: [] },
      parseLimits("output_throughput=5%"),
    );
    expect(row(rows, "output_throughput")).toMatchObject({ deltaPct: -10, betterSide: "base", verdict: "REGRESSED" });
  });

  test("a missing value is n/a and never a regression", () => {
    const rows = judgePair({ pct: 50, label: "50%", base, next: line(50, [100], { mean_itl_ms: null }), differences: [] }, parseLimits("mean_itl_ms=1%"));
    expect(row(rows, "mean_itl_ms")).toMatchObject({ next: null, delta: null, verdict: "n/a" });
  });

  test("lines without histograms (the script's files) fall back to their own percentiles", () => {
    const plain = (v: number) => line(0, [1], { hdr: undefined, p99_ttft_ms: v, median_ttft_ms: v / 2 });
    const rows = judgePair({ pct: 0, label: "0%", base: plain(200), next: plain(220), differences: [] }, parseLimits("p99_ttft_ms=5%,p50_ttft_ms=50%"));
    expect(row(rows, "p99_ttft_ms")).toMatchObject({ source: "line", base: 200, next: 220, verdict: "REGRESSED" });
    expect(row(rows, "p50_ttft_ms")).toMatchObject({ base: 100, next: 110, verdict: "ok" });
    expect(row(rows, "p999_ttft_ms")).toMatchObject({ base: null, verdict: "n/a" });
  });
});

describe("limits", () => {
  test("parse METRIC=PCT% lists; unknown metrics, bad forms, a bare number and a metric named twice are refused", () => {
    expect([...parseLimits("p99_ttft_ms=5%, mean_itl_ms=3%")]).toEqual([
      ["p99_ttft_ms", 5],
      ["mean_itl_ms", 3],
    ]);
    expect(() => parseLimits("mean_itl_ms=3")).toThrow("write the percent sign (mean_itl_ms=3%)");
    expect(() => parseLimits("mean_itl_ms=3%,mean_itl_ms=9%")).toThrow("mean_itl_ms is named twice");
    expect(() => parseLimits("p99_ttft=5%")).toThrow("compare knows no metric p99_ttft");
    expect(() => parseLimits("p99_ttft_ms<5%")).toThrow("expected METRIC=PCT%");
    expect(() => parseLimits(",")).toThrow("no limit given");
  });

  test("limits add up: the given override or add to the defaults; --only keeps just the metrics it names", () => {
    const defaults = parseLimits("mean_ttft_ms=10%,mean_itl_ms=5%");
    expect([...combineLimits(defaults, parseLimits("mean_itl_ms=30%,p99_itl_ms=9%"), null)]).toEqual([
      ["mean_ttft_ms", 10],
      ["mean_itl_ms", 30],
      ["p99_itl_ms", 9],
    ]);
    expect([...combineLimits(defaults, null, ["mean_itl_ms"])]).toEqual([["mean_itl_ms", 5]]);
  });

  test("every metric has a direction: latency lower, throughput higher", () => {
    for (const m of COMPARE_METRICS.filter((x) => x.name.endsWith("_ms") || /throughput|^capacity_/.test(x.name))) {
      expect([m.name, m.better]).toEqual([m.name, m.name.endsWith("_ms") ? "lower" : "higher"]);
    }
    // The keys a gate may name besides: a count of things gone wrong or a loss is lower, a share served from the cache higher.
    for (const [name, better] of [
      ["failed", "lower"],
      ["loss_routing_ratio", "lower"],
      ["fidelity_diverged", "lower"],
      ["observed_hit_ratio", "higher"],
    ] as const)
      expect(COMPARE_METRICS.find((m) => m.name === name)?.better).toBe(better);
  });
});

describe("pairing", () => {
  test("lines pair by pct; fingerprint differences are named cause first", () => {
    const base = [line(0, [1]), line(50, [1]), line(90, [1])];
    const next = [
      line(50, [1], { workload: fingerprint(50, { tokenizer_sha256: "b".repeat(64), vocab_size: 1, prompt_ids_hash: "f".repeat(16) }) }),
      line(99, [1]),
    ];
    const p = pairLines(base, next);
    expect(p.pairs.map((x) => x.pct)).toEqual([50]);
    expect(p.onlyInBase).toEqual(["0%", "90%"]);
    expect(p.onlyInNew).toEqual(["99%"]);
    expect(p.pairs[0]!.differences).toEqual(["tokenizer_sha256", "vocab_size", "prompt_ids_hash"]);
    expect(describeDifference(p.pairs[0]!)).toBe(
      "50%: the workloads differ in tokenizer_sha256 (base aaaaaaaaaaaa…, new bbbbbbbbbbbb…); also vocab_size, prompt_ids_hash",
    );
  });

  test("a rate sweep's lines pair by pct and rate; a closed loop is its own cell", () => {
    const at = (pct: number, rate: number) => line(pct, [1], { request_rate: rate });
    const p = pairLines([at(50, 1), at(50, 2), at(50, Infinity)], [at(50, 2), at(50, Infinity), at(50, 4)]);
    expect(p.pairs.map((x) => x.label)).toEqual(["50% @ 2 req/s", "50%"]);
    expect(p.pairs.map((x) => x.next.request_rate)).toEqual([2, Infinity]);
    expect(p.pairs.map((x) => x.base.request_rate)).toEqual([2, Infinity]);
    expect(p.onlyInBase).toEqual(["50% @ 1 req/s"]);
    expect(p.onlyInNew).toEqual(["50% @ 4 req/s"]);
  });

  test("a routed line and a one-server line (or another routing, or another replica count) are not the same setup", () => {
    const replicas = (n: number) => Array.from({ length: n }, (_, i) => ({ url: `http://r${i}` }));
    const routed = line(50, [1], { route: "prefix", replicas: replicas(2) });
    const one = pairLines([routed], [line(50, [1])]);
    expect(one.pairs[0]!.differences).toEqual(["route", "replicas"]);
    expect(describeDifference(one.pairs[0]!)).toBe("50%: the workloads differ in route (base prefix, new one server); also replicas");
    expect(pairLines([routed], [line(50, [1], { route: "round-robin", replicas: replicas(2) })]).pairs[0]!.differences).toEqual(["route"]);
    expect(pairLines([routed], [line(50, [1], { route: "prefix", replicas: replicas(3) })]).pairs[0]!.differences).toEqual(["replicas"]);
    expect(pairLines([routed], [line(50, [1], { route: "prefix", replicas: replicas(2) })]).pairs[0]!.differences).toEqual([]);
    // merge writes replicas: null (each run's replicas are its own): not known to be the same set.
    const merged = line(50, [1], { route: "prefix", replicas: null });
    expect(pairLines([routed], [merged]).pairs[0]!.differences).toEqual(["replicas"]);
    expect(pairLines([merged], [merged]).pairs[0]!.differences).toEqual([]);
  });

  test("a line without a fingerprint cannot be paired silently", () => {
    const p = pairLines([line(0, [1], { workload: undefined })], [line(0, [1])]);
    expect(p.pairs[0]!.differences).toEqual(["workload"]);
    expect(describeDifference(p.pairs[0]!)).toContain("the BASE line has no workload fingerprint");
  });
});
