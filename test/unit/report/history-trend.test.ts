/**
 * The history trend's sections from runs given as lines: a line's repeats averaged into one point, a line that a
 * run lacks leaves a gap (no point, "n/a" in the table), sweep and round lines keyed by their labels, the x axis
 * named by each run, no section without runs.
 */
import { describe, expect, test } from "bun:test";
import { historySections, trendLabel, type HistoryTrend } from "../../../src/report/history-trend.ts";

const read = (line: object, metric: string): number | null => {
  const v = (line as Record<string, unknown>)[metric];
  return typeof v === "number" ? v : null;
};

const trend: HistoryTrend = {
  metrics: ["mean_ttft_ms"],
  read,
  runs: [
    {
      runId: "a",
      label: trendLabel("2026-01-02T03:04:05.000Z", "v1"),
      lines: [
        { shared_prefix_pct: 0, repeat: 0, mean_ttft_ms: 10 },
        { shared_prefix_pct: 0, repeat: 1, mean_ttft_ms: 20 },
        { shared_prefix_pct: 50, mean_ttft_ms: 5 },
      ],
    },
    { runId: "b", label: trendLabel("2026-01-03T00:00:00.000Z", null), lines: [{ shared_prefix_pct: 0, mean_ttft_ms: 12 }] },
    {
      runId: "c",
      label: "c",
      lines: [
        { type: "round", round: 2, mean_ttft_ms: 7 },
        { shared_prefix_pct: 50, mean_ttft_ms: null },
      ],
    },
  ],
};

describe("historySections", () => {
  test("a series per line label, a point per run that measured it, repeats averaged", () => {
    const [s] = historySections(trend);
    expect(s!.id).toBe("history-mean_ttft_ms");
    expect(s!.chart.datasets.map((d) => [d.label, d.data])).toEqual([
      [
        "0%",
        [
          { x: 0, y: 15 },
          { x: 1, y: 12 },
        ],
      ],
      ["50%", [{ x: 0, y: 5 }]],
      ["round 2", [{ x: 2, y: 7 }]],
    ]);
    expect(s!.chart.x.labels).toEqual(["2026-01-02 03:04 v1", "2026-01-03 00:00", "c"]);
    expect([s!.chart.x.min, s!.chart.x.max]).toEqual([-0.5, 2.5]);
    expect(s!.table.columns).toEqual(["run", "run_id", "0%", "50%", "round 2"]);
    expect(s!.table.rows).toEqual([
      ["2026-01-02 03:04 v1", "a", "15", "5", "n/a"],
      ["2026-01-03 00:00", "b", "12", "n/a", "n/a"],
      ["c", "c", "n/a", "n/a", "7"],
    ]);
  });

  test("one section per metric, none without runs", () => {
    expect(historySections({ ...trend, metrics: ["mean_ttft_ms", "p99_ttft_ms"] }).map((s) => s.id)).toEqual(["history-mean_ttft_ms", "history-p99_ttft_ms"]);
    expect(historySections({ ...trend, runs: [] })).toEqual([]);
    expect(historySections(null)).toEqual([]);
  });
});
