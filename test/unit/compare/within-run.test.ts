/**
 * Verdicts of single runs: without repeats each latency's Δ% gets the run's own 95 % interval (a seeded bootstrap
 * over the line's per-request samples, its HDR histograms), REGRESSED only when the whole interval lies past the
 * limit, "noisy" (not a failure) when the change is past it but the interval reaches below; a line without histograms
 * is judged on its values as before. The bootstrap is deterministic.
 */
import { describe, expect, test } from "bun:test";
import { judgePair } from "../../../src/compare/judge.ts";
import { parseLimits } from "../../../src/compare/limits.ts";
import type { CompareLine } from "../../../src/compare/lines.ts";
import { noiseNote } from "../../../src/compare/repeats.ts";
import { encodeHistogram, histogramOfMs } from "../../../src/metrics/histograms.ts";
import { bootstrapChangePct } from "../../../src/metrics/intervals.ts";

/** Samples spread evenly between lo and hi (deterministic). */
const spread = (n: number, lo: number, hi: number): number[] => Array.from({ length: n }, (_, i) => lo + ((hi - lo) * i) / (n - 1));

/** numpy's linear percentile. */
function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  const rank = (p / 100) * (s.length - 1);
  const lo = Math.floor(rank);
  return s[lo]! + (rank - lo) * ((s[Math.min(lo + 1, s.length - 1)] ?? s[lo]!) - s[lo]!);
}

const avg = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** A 50 % line whose TTFT and ITL samples are these, with its numbers computed from them (as a run writes them). */
function line(ttft: number[], itl: number[], opts: { hdr?: boolean; throughput?: number } = {}): CompareLine {
  return {
    shared_prefix_pct: 50,
    workload: { seed: "42" },
    mean_ttft_ms: avg(ttft),
    p99_ttft_ms: percentile(ttft, 99),
    mean_itl_ms: avg(itl),
    mean_e2e_latency_ms: avg(ttft) + avg(itl) * 8,
    output_throughput: opts.throughput ?? 1000,
    ...(opts.hdr === false
      ? {}
      : {
          hdr: {
            ttft_us: encodeHistogram(histogramOfMs(ttft)),
            itl_us: encodeHistogram(histogramOfMs(itl)),
            e2e_latency_us: encodeHistogram(histogramOfMs(ttft.map((t) => t + avg(itl) * 8))),
          },
        }),
  } as unknown as CompareLine;
}

const judge = (base: CompareLine, next: CompareLine, limits = "mean_ttft_ms=10%,p99_ttft_ms=25%,mean_itl_ms=5%,output_throughput=5%") => {
  const rows = judgePair({ pct: 50, label: "50%", base, next, differences: [] }, parseLimits(limits));
  return (metric: string) => rows.find((r) => r.metric === metric)!;
};

describe("bootstrapChangePct", () => {
  test("deterministic, and its interval holds the change of a shifted sample", () => {
    const base = new Float64Array(spread(200, 90, 110));
    const next = new Float64Array(spread(200, 90, 110).map((x) => x * 1.2));
    const a = bootstrapChangePct(base, next, { kind: "mean" }, 7)!;
    expect(bootstrapChangePct(base, next, { kind: "mean" }, 7)).toEqual(a);
    expect(a[0]).toBeLessThan(20);
    expect(a[1]).toBeGreaterThan(20);
    expect(a[1] - a[0]).toBeLessThan(4);
  });

  test("a p99 of 16 samples is their largest two: its interval is wide; fewer than 2 samples give none", () => {
    const base = new Float64Array(spread(16, 90, 100));
    const next = new Float64Array([...spread(15, 90, 99.4), 131]);
    const ci = bootstrapChangePct(base, next, { kind: "percentile", percentile: 99 }, 1)!;
    expect(ci[0]).toBeLessThan(5);
    expect(ci[1]).toBeGreaterThan(25);
    expect(bootstrapChangePct(new Float64Array([1]), next, { kind: "mean" }, 1)).toBeNull();
  });
});

describe("judgePair without repeats", () => {
  // The case: two runs of one server, 16 requests, one slow request in NEW: p99 TTFT past its 25 % limit.
  const itl = spread(120, 19.5, 20.5);
  const baseTtft = spread(16, 90, 100);
  const nextTtft = [...spread(15, 90, 99.4), 131.5];

  test("a p99 of 16 requests past its limit is noisy, not REGRESSED: the run's own interval reaches below the limit", () => {
    const row = judge(line(baseTtft, itl), line(nextTtft, itl))("p99_ttft_ms");
    expect(row.deltaPct!).toBeGreaterThan(25);
    expect(row.ciPct![0]).toBeLessThan(25);
    expect(row.repeats).toBeUndefined();
    expect(row.verdict).toBe("noisy");
  });

  test("the same lines without histograms are judged on their values as before: REGRESSED", () => {
    const row = judge(line(baseTtft, itl, { hdr: false }), line(nextTtft, itl, { hdr: false }))("p99_ttft_ms");
    expect(row.ciPct).toBeUndefined();
    expect(row.verdict).toBe("REGRESSED");
  });

  test("a 3 % slower ITL over many tight samples is REGRESSED at a 2 % limit; the same ITL is same", () => {
    const ttft = spread(16, 90, 100);
    const slower = judge(
      line(ttft, itl),
      line(
        ttft,
        itl.map((x) => x * 1.03),
      ),
      "mean_itl_ms=2%",
    )("mean_itl_ms");
    expect(slower.ciPct![0]).toBeGreaterThan(2);
    expect(slower.verdict).toBe("REGRESSED");
    expect(judge(line(ttft, itl), line(ttft, itl))("mean_itl_ms").verdict).toBe("same");
  });

  test("a throughput's interval is its mean E2E's, widened to hold its own change: a drop the E2E does not show is noisy", () => {
    const ttft = spread(16, 90, 100);
    const row = judge(line(ttft, itl), line(ttft, itl, { throughput: 800 }))("output_throughput");
    expect(row.deltaPct).toBeCloseTo(-20, 9);
    expect(row.ciPct![0]).toBeCloseTo(-20, 9);
    expect(row.ciPct![1]).toBeGreaterThan(0);
    expect(row.verdict).toBe("noisy");
  });

  test("the noise note says which intervals are a single run's own", () => {
    const rows = judgePair({ pct: 50, label: "50%", base: line(baseTtft, itl), next: line(nextTtft, itl), differences: [] }, parseLimits("p99_ttft_ms=25%"));
    expect(noiseNote(1, 1, rows)).toContain("each single run's own for 1");
    expect(noiseNote(1, 1, rows)).toContain("noisy, not a failure");
    expect(noiseNote(1, 1, rows)).toMatch(/1 noisy: p99_ttft_ms at 50%: \+2\d\.\d% \(the run's own 95% CI [-+]\d+\.\d%\.\.\+\d+\.\d%, limit 25%\)/);
  });
});
