/**
 * Verdicts from repeats: each side is its mean over the repeats, Δ% gets Welch's 95 % interval (in percent of BASE's
 * mean), REGRESSED only when the whole interval lies past the limit, inconclusive when it straddles it, same within;
 * a side with one repeat has no noise estimate and is judged on the means as before.
 */
import { describe, expect, test } from "bun:test";
import { judgePair } from "../../../src/compare/judge.ts";
import { parseLimits } from "../../../src/compare/limits.ts";
import { noiseNote, pairRepeats, repeatsByLabel } from "../../../src/compare/repeats.ts";
import { welchInterval } from "../../../src/metrics/intervals.ts";
import type { CompareLine } from "../../../src/compare/lines.ts";

/** A line at 50 % whose mean ITL is `itl` and output throughput `tput`, repeat `repeat`. */
const line = (itl: number, repeat: number, tput = 1000): CompareLine =>
  ({ shared_prefix_pct: 50, repeat, mean_itl_ms: itl, output_throughput: tput, workload: { seed: "42" } }) as unknown as CompareLine;
const reps = (values: number[], tputs?: number[]) => values.map((v, i) => line(v, i, tputs?.[i]));

function judge(base: CompareLine[], next: CompareLine[], limits = "mean_itl_ms=2%") {
  const pair = { pct: 50, label: "50%", base: base.at(-1)!, next: next.at(-1)!, differences: [] };
  const rows = judgePair(pair, parseLimits(limits), pairRepeats(pair, repeatsByLabel(base), repeatsByLabel(next)));
  return { itl: rows.find((r) => r.metric === "mean_itl_ms")!, tput: rows.find((r) => r.metric === "output_throughput")! };
}

describe("judgePair with repeats", () => {
  test("a 3 % slower ITL with little noise: the whole interval past a 2 % limit is REGRESSED", () => {
    const { itl } = judge(reps([10.0, 10.02, 9.98]), reps([10.3, 10.31, 10.29]));
    expect(itl.base).toBeCloseTo(10, 12);
    expect(itl.next).toBeCloseTo(10.3, 12);
    expect(itl.repeats).toEqual([3, 3]);
    const w = welchInterval([10.0, 10.02, 9.98], [10.3, 10.31, 10.29]);
    expect(itl.ciPct![0]).toBeCloseTo((w.lo / 10) * 100, 9);
    expect(itl.ciPct![1]).toBeCloseTo((w.hi / 10) * 100, 9);
    expect(itl.ciPct![0]).toBeGreaterThan(2);
    expect(itl.verdict).toBe("REGRESSED");
  });

  test("the same mean difference with wide noise straddles the limit: inconclusive", () => {
    const { itl } = judge(reps([9.5, 10.5, 10.0]), reps([9.8, 10.8, 10.3]));
    expect(itl.deltaPct).toBeCloseTo(3, 9);
    expect(itl.ciPct![0]).toBeLessThan(2);
    expect(itl.ciPct![1]).toBeGreaterThan(2);
    expect(itl.verdict).toBe("inconclusive");
  });

  test("within the limit is same; a whole interval on the better side is better (higher-is-better flipped)", () => {
    const { itl, tput } = judge(reps([10, 10.1, 9.9], [1000, 1001, 999]), reps([10.05, 10.1, 10.0], [1100, 1101, 1099]), "mean_itl_ms=5%,output_throughput=5%");
    expect(itl.verdict).toBe("same");
    expect(tput.verdict).toBe("better");
    const worse = judge(reps([10, 10, 10], [1000, 1001, 999]), reps([10, 10, 10], [900, 901, 899]), "output_throughput=5%");
    expect(worse.tput.ciPct![1]).toBeLessThan(-5);
    expect(worse.tput.verdict).toBe("REGRESSED");
  });

  test("one side without repeats: no interval, the means against the limit as before", () => {
    const pair = { pct: 50, label: "50%", base: line(10, 0), next: { ...line(10.3, 0) } as CompareLine, differences: [] };
    delete (pair.next as Record<string, unknown>).repeat;
    const rows = judgePair(pair, parseLimits("mean_itl_ms=2%"), pairRepeats(pair, repeatsByLabel(reps([10, 10.2, 9.8])), repeatsByLabel([pair.next])));
    const itl = rows.find((r) => r.metric === "mean_itl_ms")!;
    expect(itl.ciPct).toBeNull();
    expect(itl.repeats).toEqual([3, 1]);
    expect(itl.verdict).toBe("REGRESSED");
    expect(noiseNote(1, 0)).toContain("no noise estimate");
  });
});
