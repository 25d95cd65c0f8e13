/**
 * The compare-repeats scenario reads its verdicts from `warmbench compare --md`: the parser must follow the
 * renderer's real output (escaped underscores and pipes, the CI and n columns of repeated lines), so a change of
 * render.ts fails here rather than in a bench run. Run with `bun test bench/test/`.
 */
import { describe, expect, test } from "bun:test";
import type { DeltaRow } from "../../src/compare/judge.ts";
import { renderCompareMarkdown } from "../../src/compare/render.ts";
import { welchInterval } from "../../src/metrics/intervals.ts";
import { parseCompareMarkdown, projectedCaught, repeatsFor } from "../scenarios/compare-repeats.ts";

const row = (metric: string, deltaPct: number, ciPct: [number, number], limitPct: number | null, verdict: DeltaRow["verdict"], label = "90%"): DeltaRow => ({
  pct: 90,
  label,
  metric,
  better: "lower",
  source: "line",
  base: 30,
  next: 30 * (1 + deltaPct / 100),
  delta: 0.3 * deltaPct,
  deltaPct,
  betterSide: deltaPct > 0 ? "base" : "new",
  limitPct,
  verdict,
  forced: false,
  ciPct,
  repeats: [3, 3],
});

const markdown = (rows: DeltaRow[]) =>
  renderCompareMarkdown({
    baseFile: "a|b_c.jsonl",
    newFile: "new.jsonl",
    rows,
    forced: [],
    onlyInBase: [],
    onlyInNew: [],
    allowMissing: false,
    saturated: [],
    findings: [],
    noise: "verdicts from 95 % Welch intervals",
  });

describe("parseCompareMarkdown", () => {
  test("reads metric, Δ%, 95% CI, limit and verdict of every row of compare's real Markdown", () => {
    const rows = parseCompareMarkdown(
      markdown([
        row("mean_itl_ms", 2.9, [2.6, 3.2], 2, "REGRESSED"),
        row("p99_itl_ms", -13.6, [-109.2, 82], 10, "inconclusive"),
        row("mean_ttft_ms", 0.4, [-0.5, 1.3], null, "same"),
      ]),
    );
    expect(rows.map((r) => [r.pct, r.metric, r["Δ%"], r["95% CI"], r.n, r.limit, r.verdict])).toEqual([
      ["90%", "mean_itl_ms", "+2.9%", "+2.6%..+3.2%", "3/3", "2%", "REGRESSED"],
      ["90%", "p99_itl_ms", "-13.6%", "-109.2%..+82.0%", "3/3", "10%", "inconclusive"],
      ["90%", "mean_ttft_ms", "+0.4%", "-0.5%..+1.3%", "3/3", "-", "same"],
    ]);
  });

  test("an escaped pipe stays inside its cell", () => {
    const rows = parseCompareMarkdown(markdown([row("mean_itl_ms", 1, [0, 2], 2, "same", "a|b")]));
    expect(rows[0]!.pct).toBe("a|b");
    expect(rows[0]!.verdict).toBe("same");
  });

  test("a Markdown without the delta table is refused", () => {
    expect(() => parseCompareMarkdown("## warmbench compare\n\nno table\n")).toThrow("no delta table");
  });
});

describe("projectedCaught and repeatsFor", () => {
  const steady = { base: [30, 30, 30], next: [30.9, 30.9, 30.9] };
  // BASE mean 30, sd 0.3 (variance 0.09); NEW without spread; a shift of 3 %: the half-width at N is t(N-1) x 0.3
  // / sqrt(N) / 30 x 100 = t(N-1) / sqrt(N) points, against a margin of 1 point over the 2 % limit.
  const spread = { base: [30, 30.3, 29.7], next: [30.9, 30.9, 30.9] };
  test("no spread: the shift alone decides, at any N", () => {
    expect(projectedCaught([steady], 2, 3, 2)).toBe(1);
    expect(projectedCaught([steady], 2, 3, 3.5)).toBe(0);
  });
  // N = 3: t(2) 4.303 / 1.732 = 2.48; N = 6: t(5) 2.571 / 2.449 = 1.05; N = 7: t(6) 2.447 / 2.646 = 0.925 < 1.
  test("a spread side needs the N whose half-width fits in the margin", () => {
    expect(projectedCaught([spread], 3, 3, 2)).toBe(0);
    expect(projectedCaught([spread], 6, 3, 2)).toBe(0);
    expect(projectedCaught([spread], 7, 3, 2)).toBe(1);
    expect(repeatsFor([spread, steady], 2, 3, 2)).toBe(7);
    expect(repeatsFor([spread, steady], 1, 3, 2)).toBe(2);
  });
  test("at N = 3 the half-width is compare's own Welch interval's", () => {
    const ci = welchInterval(spread.base, spread.next);
    expect(((ci.hi - ci.lo) / 2 / 30) * 100).toBeCloseTo(((4.303 * 0.3) / Math.sqrt(3) / 30) * 100, 2);
  });
  test("a shift within the limit: no N is enough", () => expect(repeatsFor([steady], 1, 2, 2)).toBeNull());
});
