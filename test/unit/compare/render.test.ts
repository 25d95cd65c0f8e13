import { expect, test } from "bun:test";
import type { DeltaRow } from "../../../src/compare/judge.ts";
import { renderCompareConsole, renderCompareMarkdown, type Comparison } from "../../../src/compare/render.ts";

const row = (over: Partial<DeltaRow>): DeltaRow => ({
  pct: 50,
  label: "50%",
  metric: "mean_itl_ms",
  better: "lower",
  source: "line",
  base: 10,
  next: 12,
  delta: 2,
  deltaPct: 20,
  betterSide: "base",
  limitPct: 5,
  verdict: "REGRESSED",
  forced: false,
  ...over,
});

const comparison: Comparison = {
  baseFile: "base.jsonl",
  newFile: "new.jsonl",
  rows: [
    row({}),
    row({
      pct: 90,
      label: "90%",
      metric: "output_throughput",
      better: "higher",
      base: 100,
      next: 110,
      delta: 10,
      deltaPct: 10,
      betterSide: "new",
      limitPct: null,
      verdict: "better",
      forced: true,
    }),
  ],
  forced: ["90%: the workloads differ in seed (base 1, new 2)"],
  onlyInBase: ["0%"],
  onlyInNew: [],
  allowMissing: false,
  saturated: ["NEW at 50%"],
  findings: [],
};

test("the console table: one row per metric and pct, forced pcts starred, notes and the verdict under it", () => {
  const text = renderCompareConsole(comparison);
  expect(text).toMatch(/^ 50% +mean_itl_ms +line +10 +12 +\+2 +\+20\.0% +base +5% +REGRESSED$/m);
  expect(text).toMatch(/^90%\* +output_throughput +line +100 +110 +\+10 +\+10\.0% +new +- +better$/m);
  expect(text).toContain("* compared with --force although the workloads differ: 90%: the workloads differ in seed");
  expect(text).toContain("client saturated, so those numbers may be the client's own delay: NEW at 50%");
  expect(text).toContain("lines only in BASE (not compared): 0%");
  expect(text).toContain("1 regression(s) beyond the limits: mean_itl_ms at 50%: +20.0% (limit 5%)");
});

test("the Markdown holds the same rows", () => {
  const md = renderCompareMarkdown(comparison);
  expect(md).toContain("| 50% | mean\\_itl\\_ms | line | 10 | 12 | +2 | +20.0% | base | 5% | REGRESSED |");
  expect(md).toContain("| 90%\\* | output\\_throughput |");
});

test("an interval of a latency is never below -100 % (it cannot fall by more than all of it); the TTFT model's fitted terms are left", async () => {
  const { boundedInterval } = await import("../../../src/compare/render.ts");
  expect(boundedInterval(row({ ciPct: [-186.7, 80.9] })).ciPct).toEqual([-100, 80.9]);
  expect(boundedInterval(row({ ciPct: [-250, -150] })).ciPct).toEqual([-100, -100]);
  expect(boundedInterval(row({ ciPct: [-20, 30] })).ciPct).toEqual([-20, 30]);
  expect(boundedInterval(row({ ciPct: null })).ciPct).toBeNull();
  expect(boundedInterval(row({ metric: "ttft_model_fixed_ms", ciPct: [-186.7, 80.9] })).ciPct).toEqual([-186.7, 80.9]);
});
