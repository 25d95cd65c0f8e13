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
    { expr: "p99_ttft_ms<=800", value: NaN, pass: false },
    { expr: "cached_tokens_mismatched==0", value: null, pass: false },
    { expr: "mean_ttft_ms<100", value: 1, pass: true },
  ]);
});

test("failures are listed with their line, in line order", () => {
  const lines = [
    { shared_prefix_pct: 0, gates: [{ expr: "a", value: 1, pass: true }] },
    { shared_prefix_pct: 50, gates: [{ expr: "b", value: 2, pass: false }, { expr: "c", value: null, pass: false }] },
    { shared_prefix_pct: 90 },
  ];
  expect(gateFailures(lines)).toEqual([
    { expr: "b", value: 2, pass: false, axes: { shared_prefix_pct: 50, working_set: 1, request_rate: Infinity }, line: "50%" },
    { expr: "c", value: null, pass: false, axes: { shared_prefix_pct: 50, working_set: 1, request_rate: Infinity }, line: "50%" },
  ]);
});
