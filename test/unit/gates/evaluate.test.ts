import { expect, test } from "bun:test";
import { evaluateGates, gateFailures } from "../../../src/gates/evaluate.ts";
import { parseGate } from "../../../src/gates/parse.ts";

const gates = ["p99_ttft_ms<=800", "mean_itl_ms<25@pct=50", "cached_tokens_mismatched==0", "mean_ttft_ms<100"].map((g) => parseGate(g));

test("every gate whose scope holds the pct is judged on the line's own numbers, in order", () => {
  const line = { shared_prefix_pct: 50, p99_ttft_ms: 900, mean_itl_ms: 20, cached_tokens_mismatched: 0, mean_ttft_ms: 99.5 };
  expect(evaluateGates(gates, line)).toEqual([
    { expr: "p99_ttft_ms<=800", value: 900, pass: false },
    { expr: "mean_itl_ms<25@pct=50", value: 20, pass: true },
    { expr: "cached_tokens_mismatched==0", value: 0, pass: true },
    { expr: "mean_ttft_ms<100", value: 99.5, pass: true },
  ]);
  expect(evaluateGates(gates, { ...line, shared_prefix_pct: 0 }).map((g) => g.expr)).not.toContain("mean_itl_ms<25@pct=50");
});

test("an unmeasured (null) or undefined (NaN) value fails: a gate passes only on evidence", () => {
  const line = { shared_prefix_pct: 0, p99_ttft_ms: NaN, cached_tokens_mismatched: null, mean_ttft_ms: 1 };
  expect(evaluateGates(gates, line)).toEqual([
    { expr: "p99_ttft_ms<=800", value: NaN, pass: false, evidence: ["no_samples: p99_ttft_ms has no TTFT sample"] },
    { expr: "cached_tokens_mismatched==0", value: null, pass: false, evidence: ["no_samples: cached_tokens_mismatched has no value"] },
    { expr: "mean_ttft_ms<100", value: 1, pass: true },
  ]);
});

test("a gate on ITL fails when the server stopped after one token (no ITL sample)", () => {
  // A line of 0.3 wrote 0 here and the gate passed; the evidence says there was no sample, whatever the value.
  const evidence = {
    samples: { ttft: 8, tpot: 0, itl: 0, e2e: 8, from_intended: 8, schedule_lag: 8 },
    requests: { planned: 8, sent: 8, finished: 8 },
    complete: true,
    load: { offered_request_rate: null, achieved_request_rate: null, offered_concurrency: 4, achieved_concurrency: 4, sustained: true },
    cache: { flush_proven: true, warm_proven: true, per_request: "ok" },
    client_healthy: true,
    run_ids: ["r"],
  };
  const line = { shared_prefix_pct: 0, p99_itl_ms: 0, mean_tpot_ms: null, p99_ttft_ms: 5, evidence };
  const judged = evaluateGates(
    ["p99_itl_ms<=5", "mean_tpot_ms<=5", "p99_ttft_ms<=800"].map((g) => parseGate(g)),
    line,
  );
  expect(judged.map((g) => g.pass)).toEqual([false, false, true]);
  expect(judged[0]!.evidence).toEqual(["no_samples: p99_itl_ms has no ITL sample"]);
  expect(judged[1]!.evidence).toEqual(["no_samples: mean_tpot_ms has no TPOT (a request with more than one output token) sample"]);
});

test("a gate fails on an interrupted line, whatever its value", () => {
  const line = { shared_prefix_pct: 0, p99_ttft_ms: 5, interrupted: true };
  const [g] = evaluateGates([parseGate("p99_ttft_ms<=800")], line);
  expect(g).toEqual({ expr: "p99_ttft_ms<=800", value: 5, pass: false, evidence: ["interrupted: the run was stopped while the line was measured"] });
});

test("failures are listed with their line, in line order", () => {
  const lines = [
    { shared_prefix_pct: 0, gates: [{ expr: "a", value: 1, pass: true }] },
    {
      shared_prefix_pct: 50,
      gates: [
        { expr: "b", value: 2, pass: false },
        { expr: "c", value: null, pass: false },
      ],
    },
    { shared_prefix_pct: 90 },
  ];
  expect(gateFailures(lines)).toEqual([
    { expr: "b", value: 2, pass: false, axes: { shared_prefix_pct: 50, working_set: 1, request_rate: Infinity }, line: "50%" },
    { expr: "c", value: null, pass: false, axes: { shared_prefix_pct: 50, working_set: 1, request_rate: Infinity }, line: "50%" },
  ]);
});
