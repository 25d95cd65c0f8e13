/**
 * One key, one definition: the report's percentile tables and compare read a line's percentile as the line holds it
 * (numpy's, the value its gates judged), and the histograms only for what it does not hold. 0.3's HTML page showed a
 * p50 of 179.7 (from the histogram) beside the line's median 191.09.
 */
import { expect, test } from "bun:test";
import { encodeHistogram, histogramOfMs } from "../../../src/metrics/histograms.ts";
import { hdrPercentileMs, linePercentileMs } from "../../../src/report/hdr-stats.ts";
import { distributionTable } from "../../../src/report/tables.ts";
import type { ReportRun } from "../../../src/report/runs.ts";

// Six TTFTs: numpy's median is the mean of the 3rd and 4th (191.09); a histogram's p50 lands on a sample (179.7).
const ttfts = [120, 150, 179.7, 202.48, 240, 300];
const h = encodeHistogram(histogramOfMs(ttfts));
const line = {
  shared_prefix_pct: 50,
  median_ttft_ms: 191.09,
  p90_ttft_ms: 270,
  p99_ttft_ms: 297,
  hdr: { ttft_us: h, tpot_us: h, itl_us: h, e2e_latency_us: h },
};

test("a percentile the line holds is the line's; one it does not is the histogram's", () => {
  expect(hdrPercentileMs(line.hdr as never, "ttft", 50)).toBeCloseTo(179.7, 0);
  expect(linePercentileMs(line, "ttft", 50)).toEqual({ value: 191.09, source: "line" });
  expect(linePercentileMs(line, "ttft", 99)).toEqual({ value: 297, source: "line" });
  expect(linePercentileMs(line, "ttft", 99.9).source).toBe("hdr");
  // The script writes no p90 of E2E: that one is the histogram's.
  expect(linePercentileMs(line, "e2e_latency", 90).source).toBe("hdr");
});

test("the report's distribution table shows the line's median, not the histogram's", () => {
  const run = { label: "r", pcts: [line], rounds: [], kind: "sweep", file: "r.jsonl", runId: "x", ttftModel: null } as unknown as ReportRun;
  const table = distributionTable([run], "ttft", "TTFT");
  expect(table.rows[0]!.slice(0, 5)).toEqual(["r", "50%", "191.09", "270", "297"]);
});
