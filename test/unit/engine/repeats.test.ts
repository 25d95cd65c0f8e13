/** A line's repeats: what --repeat-until-cv watches, when it stops, and gates judged once on the mean. */
import { expect, test } from "bun:test";
import { parseGate } from "../../../src/gates/parse.ts";
import type { SweepLine } from "../../../src/metrics/sweep-line.ts";
import { renderRepeats } from "../../../src/report/repeats.ts";
import { gatesOnMean, repeatsDone, watchedMetrics, worstCv } from "../../../src/engine/repeats.ts";

const line = (pct: number, repeat: number, m: Record<string, number | null>, interrupted = false) =>
  ({ shared_prefix_pct: pct, working_set: 1, request_rate: Infinity, repeat, interrupted, gates: [], ...m }) as unknown as SweepLine;

// p99_ttft_ms varies by ~10 %, mean_itl_ms by ~1 %, output_throughput not at all.
const steady = [
  line(50, 0, { p99_ttft_ms: 100, mean_itl_ms: 10, output_throughput: 500 }),
  line(50, 1, { p99_ttft_ms: 110, mean_itl_ms: 10.1, output_throughput: 500 }),
  line(50, 2, { p99_ttft_ms: 90, mean_itl_ms: 9.9, output_throughput: 500 }),
];

test("without a gate the tail TTFT and the ITL are watched; with one, the gates that hold the line", () => {
  expect(watchedMetrics([], steady[0]!)).toEqual(["p99_ttft_ms", "mean_itl_ms"]);
  expect(watchedMetrics([parseGate("output_throughput>=1"), parseGate("mean_itl_ms<=5@pct=90")], steady[0]!)).toEqual(["output_throughput"]);
  // The worst CV of the watched ones: p99_ttft_ms's 10 %, or output_throughput's 0 when only it is gated.
  expect(worstCv(steady, [])).toBeCloseTo(0.1, 6);
  expect(worstCv(steady, [parseGate("output_throughput>=1")])).toBe(0);
  expect(worstCv(steady.slice(0, 1), [])).toBe(Infinity);
});

test("--repeat-until-cv stops once the CV is below the target, never before 2 repeats; --repeat is the most", () => {
  const opts = (cv: number | undefined) => ({ repeat: 5, repeatUntilCv: cv, gates: [] });
  expect(repeatsDone(steady.slice(0, 1), opts(10))).toBe(false);
  expect(repeatsDone(steady, opts(0.2))).toBe(true);
  expect(repeatsDone(steady, opts(0.05))).toBe(false);
  expect(repeatsDone(steady, { ...opts(0.05), gates: [parseGate("output_throughput>=1")] })).toBe(true);
  expect(repeatsDone(steady, opts(undefined))).toBe(false);
  expect(repeatsDone(steady, { repeat: 3, repeatUntilCv: undefined, gates: [] })).toBe(true);
  // A metric a repeat could not measure never lets the repeats stop early.
  expect(repeatsDone([...steady, line(50, 3, { p99_ttft_ms: null, mean_itl_ms: 10 })], opts(0.5))).toBe(false);
});

test("gates are judged on the mean, with its 95 % t interval; an unmeasured repeat fails the gate", () => {
  const [ttft, tput] = gatesOnMean([parseGate("p99_ttft_ms<=101"), parseGate("output_throughput>=500")], steady);
  expect(ttft).toMatchObject({ expr: "p99_ttft_ms<=101", value: 100, pass: true, repeats: 3 });
  // t(0.975, 2) = 4.303, sd 10, n 3: 100 ± 24.84.
  expect(ttft!.ci95_low).toBeCloseTo(100 - (4.302653 * 10) / Math.sqrt(3), 3);
  expect(ttft!.ci95_high).toBeCloseTo(100 + (4.302653 * 10) / Math.sqrt(3), 3);
  expect(tput).toMatchObject({ value: 500, pass: true, ci95_low: 500, ci95_high: 500 });
  // The last repeat alone (90) would pass <=95; the mean (100) does not.
  expect(gatesOnMean([parseGate("p99_ttft_ms<=95")], steady)[0]!.pass).toBe(false);
  const [gap] = gatesOnMean([parseGate("p99_ttft_ms<=1000")], [...steady, line(50, 3, { p99_ttft_ms: null })]);
  expect(gap).toMatchObject({ value: null, pass: false });
  // An interrupted repeat is left out of the mean when complete ones exist; a gate scoped elsewhere judges nothing.
  expect(gatesOnMean([parseGate("p99_ttft_ms<=1000")], [...steady, line(50, 3, { p99_ttft_ms: 1e6 }, true)])[0]!.value).toBe(100);
  expect(gatesOnMean([parseGate("p99_ttft_ms<=1000@pct=90")], steady)).toEqual([]);
});

test("the console table: each metric's mean, interval and CV, and the gates on the mean", () => {
  const last = { ...steady[2]!, gates: gatesOnMean([parseGate("p99_ttft_ms<=95")], steady) };
  const text = renderRepeats([steady[0]!, steady[1]!, last], 5, ["p99_ttft_ms"]);
  expect(text).toContain("Repeats of 50%: 3 of 5");
  expect(text).toMatch(/p99_ttft_ms\s+100\s+75\.16\.\.124\.84\s+10\.0%/);
  expect(text).toMatch(/output_throughput\s+500\s+500\.\.500\s+0\.0%/);
  expect(text).toContain("gate p99_ttft_ms<=95: FAIL on the mean 100 (95% CI 75.16..124.84, 3 repeats)");
  // A metric some repeat lacks is left out rather than averaged over fewer.
  expect(text).not.toContain("mean_e2e_latency_ms");
});
