/**
 * Our metrics against the reference script's own: the fixture is what bench_warm_cache.py's calculate_metrics,
 * print_benchmark_result and maybe_write_summary_jsonl computed, wrote and printed for recorded requests
 * (test/fixtures/metrics/reference/make_reference_fixtures.py imports the script file and runs them). Every
 * written number must be the same float64, and the printed block the same bytes.
 */
import { describe, expect, test } from "bun:test";
import type { RequestRecord } from "../../../src/schema/record.ts";
import { computeScriptMetrics, latencySeriesMs, type ScriptMetrics } from "../../../src/metrics/script-metrics.ts";
import { npMean, npMedian, npPercentile, npStd } from "../../../src/metrics/stats.ts";

/** The script's `np.f(xs or 0)`: an empty list becomes the scalar 0 (our metrics write null there instead). */
const orZero = (xs: ArrayLike<number>): ArrayLike<number> => (xs.length === 0 ? [0] : xs);
import { requestMetrics, scriptPlaceKeys, type ScriptPlace } from "../../../src/metrics/summarize.ts";
import { buildLine } from "../../../src/schema/build-line.ts";
import type { StoredSweepLine } from "../../../src/metrics/sweep-line.ts";
import { renderConsole } from "../../../src/report/console.ts";
import { parseJsonlLine } from "../../../src/report/jsonl.ts";
import { scriptMetricCases, type FixtureCase } from "../../helpers/script-metric-cases.ts";

const fixture = scriptMetricCases;
const cases = fixture.cases;
const byName = (name: string): FixtureCase => cases.find((c) => c.name === name)!;

/** The generator's fake tokenizer: one token per space-separated word. */
const countWords = (text: string): number => text.split(" ").filter((w) => w !== "").length;

function toRecords(c: FixtureCase): RequestRecord[] {
  return c.records.map((r, index) => ({
    index,
    ok: r.ok,
    failureKind: r.ok ? null : "network",
    failureMessage: r.ok ? "" : "recorded failure",
    httpStatus: 200,
    promptLen: r.promptLen,
    intendedMs: 0,
    startMs: 0,
    firstTokenMs: r.ttftMs,
    lastEventMs: r.latencyMs,
    ttftMs: r.ttftMs,
    latencyMs: r.latencyMs,
    outputLen: r.outputLen,
    cachedTokens: -1,
    cachedDeviceTokens: -1,
    cachedHostTokens: -1,
    cachedStorageTokens: -1,
    itlMs: Float64Array.from(r.itlMs),
    tokenEvents: r.outputLen,
    finishReason: "length",
    generatedText: r.generatedText,
  }));
}

function toPlace(c: FixtureCase): ScriptPlace {
  const x = c.context;
  return {
    backend: x.backend,
    requestRate: Infinity,
    maxConcurrency: x.max_concurrency,
    pct: x.pct,
    prefixLen: x.prefix_len,
    suffixLen: x.suffix_len,
    totalTokens: x.total_tokens,
    numPrompts: x.num_prompts,
    outputLen: x.output_len,
  };
}

/** The line's script part as the one builder makes it from the engine's groups: where it sits, its request metrics. */
const summarize = (c: FixtureCase): Record<string, unknown> => {
  // Not the histograms: a sweep line's include the latency from the intended send, which the script has not.
  const { hdr, ...requests } = requestMetrics(toRecords(c), c.durationS, countWords);
  return buildLine("sweep", { place: scriptPlaceKeys(toPlace(c)), requests });
};

/** `[key, ours, script]` for every key of `expected` whose value is not the same (Object.is: NaN equal, -0 not 0). */
function differences(ours: Record<string, unknown>, expected: Record<string, unknown>): [string, unknown, unknown][] {
  return Object.keys(expected)
    .filter((key) => !Object.is(ours[key], expected[key]))
    .map((key) => [key, ours[key], expected[key]]);
}

const written = cases.filter((c) => c.script.error === null);

describe("the fixture is the script's own output on the recorded outcomes we need", () => {
  test("request counts around numpy's summation branches, an all-failed pct, and cases the script wrote", () => {
    for (const n of [1, 2, 7, 8, 9, 128, 129, 1000]) expect(byName(`n${n}`).records.length).toBe(n);
    expect(written.length).toBeGreaterThanOrEqual(20);
    expect(fixture.numpy_version.startsWith("2.")).toBe(true);
  });

  test("it holds failures, output lengths 0/1/2/many, empty ITLs and multi-token ITL events", () => {
    const records = cases.flatMap((c) => c.records);
    const ok = records.filter((r) => r.ok);
    expect(records.some((r) => !r.ok && r.outputLen > 0 && r.itlMs.length > 0)).toBe(true);
    for (const len of [0, 1, 2]) expect(ok.some((r) => r.outputLen === len)).toBe(true);
    expect(ok.some((r) => r.outputLen > 1000)).toBe(true);
    expect(ok.some((r) => r.outputLen > 0 && r.itlMs.length === 0)).toBe(true);
    // A gap spread over Δ tokens shows as Δ equal neighbours.
    const multiToken = byName("multi-token-itl").records.flatMap((r) => r.itlMs);
    expect(multiToken.some((v, i) => i >= 2 && v === multiToken[i - 1] && v === multiToken[i - 2])).toBe(true);
  });
});

/** The stems of the series that have no sample in the case: the script writes 0 for their statistics, we write null. */
function emptySeries(c: FixtureCase): string[] {
  const ok = c.records.filter((r) => r.ok);
  const out: string[] = [];
  if (ok.length === 0) out.push("ttft", "e2e_latency");
  if (!ok.some((r) => r.outputLen > 1)) out.push("tpot");
  if (!ok.some((r) => r.itlMs.length > 0)) out.push("itl");
  return out;
}
const STAT_KEY = /^(mean|median|std|p90|p99)_(ttft|tpot|itl|e2e_latency)_ms$/;
/** The script's line with our one documented difference applied: a statistic of an empty series is null, not 0. */
function withNulls(c: FixtureCase, line: Record<string, unknown>): Record<string, unknown> {
  const empty = emptySeries(c);
  return Object.fromEntries(Object.entries(line).map(([k, v]) => [k, empty.includes(STAT_KEY.exec(k)?.[2] ?? "") ? null : v]));
}
/** The script's printed block with the same difference: such a row reads n/a where the script prints 0.00. */
function consoleWithNulls(c: FixtureCase, text: string): string {
  const labels: Record<string, string> = { ttft: "TTFT", tpot: "TPOT", itl: "ITL", e2e_latency: "E2E Latency" };
  let out = text;
  for (const stem of emptySeries(c)) {
    out = out.replace(new RegExp(`^((?:Mean|Median|P90|P99) ${labels[stem]} \\(ms\\):\\s+)0\\.00(\\s*)$`, "gm"), (_m, head: string, tail: string) => {
      const cell = "n/a".padEnd(4 + tail.length);
      return `${head}${cell}`;
    });
  }
  return out;
}

test("the one difference from the script: the no-tpot-no-itl case has empty TPOT and ITL series, null here, 0 there", () => {
  const c = byName("no-tpot-no-itl");
  expect(emptySeries(c)).toEqual(["tpot", "itl"]);
  const line = parseJsonlLine(c.script.jsonl!) as Record<string, unknown>;
  expect(line.p99_itl_ms).toBe(0);
  expect(computeScriptMetrics(toRecords(c), c.durationS, countWords).p99_itl_ms).toBeNull();
});

describe("computeScriptMetrics equals the script's calculate_metrics bit for bit", () => {
  for (const c of written) {
    test(c.name, () => {
      const line = withNulls(c, parseJsonlLine(c.script.jsonl!) as Record<string, unknown>);
      const ours = computeScriptMetrics(toRecords(c), c.durationS, countWords);
      // Every BenchmarkMetrics field is in the line the script wrote.
      expect(Object.keys(ours).every((key) => key in line)).toBe(true);
      const expected = Object.fromEntries(Object.keys(ours).map((key) => [key, line[key]]));
      expect(differences(ours as unknown as Record<string, unknown>, expected)).toEqual([]);
    });
  }
});

describe("the line builder writes every number of the script's JSONL line, in its order, and prints its block byte for byte", () => {
  for (const c of written) {
    test(c.name, () => {
      const line = withNulls(c, parseJsonlLine(c.script.jsonl!) as Record<string, unknown>);
      const result = summarize(c);
      const scriptKeys = Object.keys(line);
      expect(Object.keys(result).slice(0, scriptKeys.length)).toEqual(scriptKeys);
      const ours = result;
      expect(differences(ours, line)).toEqual([]);
      // Our extra sections are skipped when their keys are absent: render from the script's keys alone.
      const scriptPart = Object.fromEntries(scriptKeys.map((key) => [key, ours[key]])) as unknown as StoredSweepLine;
      expect(renderConsole(scriptPart)).toBe(consoleWithNulls(c, c.script.console!));
    });
  }
});

describe("all requests failed", () => {
  const c = byName("all-failed");

  test("the script raises (np.percentile of an empty list) and writes nothing", () => {
    expect(c.records.every((r) => !r.ok)).toBe(true);
    expect(c.script.error).toStartWith("IndexError");
    expect(c.script.jsonl).toBeNull();
  });

  test("we write null for every latency statistic (no sample), and zeros for the counts and throughputs", () => {
    const m = computeScriptMetrics(toRecords(c), c.durationS, countWords);
    for (const [key, value] of Object.entries(m)) {
      if (STAT_KEY.test(key)) expect([key, value]).toEqual([key, null]);
      else expect([key, Object.is(value, 0)]).toEqual([key, true]);
    }
  });
});

describe("the fixture discriminates", () => {
  test("computing in milliseconds instead of the script's seconds would differ from it", () => {
    let compared = 0;
    let mismatched = 0;
    for (const c of written) {
      const line = parseJsonlLine(c.script.jsonl!) as Record<string, number>;
      const series = latencySeriesMs(toRecords(c));
      const pairs: [keyof ScriptMetrics, number][] = [];
      for (const [name, xs] of [
        ["ttft", series.ttfts],
        ["tpot", series.tpots],
        ["itl", series.itls],
      ] as const) {
        const values = orZero(xs);
        pairs.push(
          [`mean_${name}_ms`, npMean(values)],
          [`median_${name}_ms`, npMedian(values)],
          [`std_${name}_ms`, npStd(values)],
          [`p90_${name}_ms`, npPercentile(values, 90)],
          [`p99_${name}_ms`, npPercentile(values, 99)],
        );
      }
      for (const [key, msDomain] of pairs) {
        compared++;
        if (!Object.is(msDomain, line[key])) mismatched++;
      }
    }
    expect(compared).toBeGreaterThan(300);
    expect(mismatched).toBeGreaterThan(compared / 10);
  });

  test("the word counter is the generator's: retokenized totals are not the output lengths", () => {
    const c = byName("n128");
    const m = computeScriptMetrics(toRecords(c), c.durationS, countWords);
    expect(m.total_output_retokenized).not.toBe(m.total_output);
    expect(countWords("  a  b ")).toBe(2);
  });
});
