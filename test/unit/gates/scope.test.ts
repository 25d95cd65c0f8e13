import { describe, expect, test } from "bun:test";
import { axesLabel, axesOf, plannedRoundAxes, plannedSweepAxes } from "../../../src/schema/axes.ts";
import { evaluateGates, gateFailures } from "../../../src/gates/evaluate.ts";
import { ROUND_NUMERIC_KEYS } from "../../../src/gates/metrics.ts";
import { gateApplies, parseGate, parseGates } from "../../../src/gates/parse.ts";
import { checkGateMetrics, checkGatesMatchPlan, describePlan } from "../../../src/gates/plan.ts";
import { NUMERIC_KEYS } from "../../../src/schema/keys.ts";

const sweepAt = (shared_prefix_pct: number, working_set = 1, request_rate = Infinity) => ({ shared_prefix_pct, working_set, request_rate });

describe("scopes on every axis", () => {
  test("@pct is an alias of @shared_prefix_pct", () => {
    expect(parseGate("failed==0@pct>=50").scope).toEqual([{ axis: "shared_prefix_pct", op: ">=", value: 50 }]);
    expect(parseGate("failed==0@shared_prefix_pct>=50").scope).toEqual([{ axis: "shared_prefix_pct", op: ">=", value: 50 }]);
  });

  test("@working_set, @request_rate (numbers or inf) and @round", () => {
    expect(parseGate("p99_ttft_ms<=800@working_set=4").scope).toEqual([{ axis: "working_set", op: "==", value: 4 }]);
    expect(parseGate("p99_ttft_ms<=800@request_rate>=7.5").scope).toEqual([{ axis: "request_rate", op: ">=", value: 7.5 }]);
    expect(parseGate("p99_ttft_ms<=800@request_rate=inf").scope).toEqual([{ axis: "request_rate", op: "==", value: Infinity }]);
    expect(parseGate("p99_ttft_ms<=800@round>=2").scope).toEqual([{ axis: "round", op: ">=", value: 2 }]);
  });

  test("several scopes must all hold", () => {
    const g = parseGate(" mean_ttft_ms < 50 @pct=90 @working_set=4 @request_rate=200 ");
    expect(g.expr).toBe("mean_ttft_ms<50@pct=90@working_set=4@request_rate=200");
    expect(g.scope.map((c) => c.axis)).toEqual(["shared_prefix_pct", "working_set", "request_rate"]);
    expect(gateApplies(g, sweepAt(90, 4, 200))).toBe(true);
    expect(gateApplies(g, sweepAt(90, 4, 100))).toBe(false);
    expect(gateApplies(g, sweepAt(90, 1, 200))).toBe(false);
    expect(gateApplies(g, sweepAt(50, 4, 200))).toBe(false);
  });

  test("a scope on an axis the line lacks does not hold; an unknown axis is refused, naming it", () => {
    expect(gateApplies(parseGate("failed==0@round=0"), sweepAt(0))).toBe(false);
    expect(gateApplies(parseGate("failed==0@pct=0"), { round: 0 })).toBe(false);
    expect(gateApplies(parseGate("failed==0"), { round: 0 })).toBe(true);
    expect(() => parseGate("failed==0@turn=1")).toThrow('--gate "failed==0@turn=1": @turn is not an axis of a line (one of @pct, @shared_prefix_pct');
    expect(() => parseGate("failed==0@round")).toThrow("expected METRIC OP VALUE");
  });

  test("round-line keys are gate metrics; a key of neither kind is still refused", () => {
    expect(parseGate("approximate_turns==0").metric).toBe("approximate_turns");
    expect(parseGate("observed_hit_ratio>=0.5@round>=1").metric).toBe("observed_hit_ratio");
    expect(() => parseGate("ready_queue_policy==1")).toThrow("ready_queue_policy is not a numeric key");
    expect(ROUND_NUMERIC_KEYS).toContain("round");
    expect(ROUND_NUMERIC_KEYS).toContain("p99_ttft_ms");
    expect(ROUND_NUMERIC_KEYS).not.toContain("cache_check");
    expect(ROUND_NUMERIC_KEYS).not.toContain("request_rate");
  });
});

describe("evaluation on any line", () => {
  const round = { type: "round", round: 3, num_rounds: 5, p99_ttft_ms: 120, approximate_turns: 0, observed_hit_ratio: 0.9, working_set: 4 };

  test("a round line is judged by key, with @round scopes", () => {
    const gates = ["p99_ttft_ms<=100", "approximate_turns==0@round>=1", "observed_hit_ratio>=0.95@round=0", "mean_cached_tokens>0"].map((g) => parseGate(g));
    expect(evaluateGates(gates, round)).toEqual([
      { expr: "p99_ttft_ms<=100", value: 120, pass: false },
      { expr: "approximate_turns==0@round>=1", value: 0, pass: true },
      // A key the line lacks is no evidence.
      { expr: "mean_cached_tokens>0", value: null, pass: false, evidence: ["metric_absent: the line has no mean_cached_tokens"] },
    ]);
  });

  test("a round line's working_set is not a sweep axis: a @working_set scope does not select it", () => {
    expect(axesOf(round)).toEqual({ round: 3 });
    expect(evaluateGates([parseGate("failed==0@working_set=4")], round)).toEqual([]);
  });

  test("failures name their line by its axes", () => {
    const lines = [
      { ...round, gates: [{ expr: "a", value: 1, pass: false }] },
      { shared_prefix_pct: 90, working_set: 4, request_rate: 200, gates: [{ expr: "b", value: 2, pass: false }] },
      {
        shared_prefix_pct: 50,
        gates: [
          { expr: "c", value: 3, pass: false },
          { expr: "d", value: 3, pass: true },
        ],
      },
    ];
    expect(gateFailures(lines).map((f) => `${f.expr} at ${f.line}`)).toEqual(["a at round 3", "b at 90% ws=4 @ 200 req/s", "c at 50%"]);
    expect(axesLabel({ shared_prefix_pct: 0, working_set: 1, request_rate: 8 })).toBe("0% @ 8 req/s");
  });
});

describe("gates checked against the planned lines", () => {
  const sweep = plannedSweepAxes([0, 50], [1], [Infinity]);

  test("the sweep plan is pcts x working sets x rates", () => {
    expect(plannedSweepAxes([0, 50], [1, 4], [8, Infinity])).toHaveLength(8);
    expect(describePlan(plannedSweepAxes([0, 50], [1, 4], [8, Infinity]))).toBe("pct 0, 50 x working set 1, 4 x request rate 8, inf");
    expect(describePlan(plannedRoundAxes(5))).toBe("rounds 0..4");
  });

  test("a gate that matches some line passes the check", () => {
    expect(() => checkGatesMatchPlan(parseGates("failed==0\np99_ttft_ms<=1@pct=50\nmean_itl_ms<1@pct>=40", undefined), sweep)).not.toThrow();
    expect(() => checkGatesMatchPlan(parseGates("p99_ttft_ms<=1@round=4", undefined), plannedRoundAxes(5))).not.toThrow();
  });

  test("a gate whose scope matches no planned line is a usage error naming the gate and the lines", () => {
    expect(() => checkGatesMatchPlan([parseGate("p99_ttft_ms<=0.001@pct=90")], sweep)).toThrow(
      '--gate "p99_ttft_ms<=0.001@pct=90": its scope matches no line of this run, which will have pct 0, 50',
    );
    expect(() => checkGatesMatchPlan([parseGate("failed==0@working_set=4")], sweep)).toThrow("which will have pct 0, 50 x working set 1");
    expect(() => checkGatesMatchPlan([parseGate("failed==0@request_rate<=10")], sweep)).toThrow("which will have pct 0, 50 x request rate inf");
    expect(() => checkGatesMatchPlan([parseGate("failed==0@round=5")], plannedRoundAxes(5))).toThrow(
      '--gate "failed==0@round=5": its scope matches no line of this run, which will have rounds 0..4',
    );
    expect(() => checkGatesMatchPlan([parseGate("failed==0@pct=0")], plannedRoundAxes(2))).toThrow("which will have rounds 0..1");
    expect(() => checkGatesMatchPlan([parseGate("failed==0@round=0")], sweep)).toThrow("its scope matches no line");
  });

  test("a gate on a key the planned lines lack is refused", () => {
    expect(() => checkGatesMatchPlan([parseGate("approximate_turns==0")], sweep)).toThrow(
      '--gate "approximate_turns==0": approximate_turns is not a numeric key of a pct line, so it would judge nothing',
    );
    expect(() => checkGateMetrics([parseGate("mean_cached_tokens>0")], "round")).toThrow("mean_cached_tokens is not a numeric key of a round line");
    expect(() => checkGateMetrics([parseGate("p99_ttft_ms<1")], "round")).not.toThrow();
    // Every numeric key of a pct line that a round line also has is a round metric too.
    for (const key of NUMERIC_KEYS)
      if (ROUND_NUMERIC_KEYS.includes(key as never)) expect(() => checkGateMetrics([parseGate(`${key}>=0`)], "round")).not.toThrow();
  });

  test("a gates file's gate is named by file and line", () => {
    const [g] = [parseGate("failed==0@pct=90", "--gates-file g.txt line 3")];
    expect(() => checkGatesMatchPlan([g!], sweep)).toThrow('--gates-file g.txt line 3 "failed==0@pct=90": its scope matches no line');
  });
});
