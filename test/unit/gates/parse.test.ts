import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gateApplies, holds, parseGate, parseGates, readGatesFile } from "../../../src/gates/parse.ts";

describe("parseGate", () => {
  test("the issue's examples", () => {
    expect(parseGate("p99_ttft_ms<=800")).toEqual({
      expr: "p99_ttft_ms<=800",
      metric: "p99_ttft_ms",
      op: "<=",
      value: 800,
      scope: [],
      source: '--gate "p99_ttft_ms<=800"',
    });
    expect(parseGate("failed==0")).toMatchObject({ metric: "failed", op: "==", value: 0 });
    expect(parseGate("cached_tokens_mismatched==0")).toMatchObject({ metric: "cached_tokens_mismatched" });
    expect(parseGate("output_throughput>=1500@pct>=90")).toMatchObject({ op: ">=", value: 1500, scope: [{ axis: "shared_prefix_pct", op: ">=", value: 90 }] });
    expect(parseGate("mean_itl_ms<25@pct=50")).toMatchObject({ op: "<", value: 25, scope: [{ axis: "shared_prefix_pct", op: "==", value: 50 }] });
  });

  test("spaces are dropped, numbers may be decimal, signed or in exponent form", () => {
    expect(parseGate(" p99_ttft_ms <= 1.5e3 @pct != 0 ")).toEqual({
      expr: "p99_ttft_ms<=1.5e3@pct!=0",
      metric: "p99_ttft_ms",
      op: "<=",
      value: 1500,
      scope: [{ axis: "shared_prefix_pct", op: "!=", value: 0 }],
      source: '--gate "p99_ttft_ms<=1.5e3@pct!=0"',
    });
    expect(parseGate("client_loop_lag_p99_ms<.5").value).toBe(0.5);
    expect(parseGate("mean_ttft_ms>-1").value).toBe(-1);
  });

  test("an unknown or non-numeric key is refused, naming the gate", () => {
    expect(() => parseGate("p99_ttft<=800")).toThrow('--gate "p99_ttft<=800": p99_ttft is not a numeric key of a pct or round line');
    expect(() => parseGate("cache_check==0")).toThrow("cache_check is not a numeric key");
    expect(() => parseGate("run_id==1")).toThrow("run_id is not a numeric key");
  });

  test("malformed gates are refused with the expected form", () => {
    for (const bad of ["p99_ttft_ms", "p99_ttft_ms<=", "p99_ttft_ms=>5", "p99_ttft_ms<=abc", "p99_ttft_ms<=5@pct", "p99_ttft_ms<=5@pct>=x", "<=5"]) {
      expect(() => parseGate(bad)).toThrow("expected METRIC OP VALUE");
    }
    expect(() => parseGate("failed=0")).toThrow("use == to compare a metric");
    expect(() => parseGate("failed==0@pct>=101")).toThrow("@pct 101 is outside [0, 100]");
  });

  test("repeated --gate values arrive joined by newlines", () => {
    expect(parseGates("failed==0\nmean_itl_ms<5", undefined).map((g) => g.expr)).toEqual(["failed==0", "mean_itl_ms<5"]);
    expect(parseGates(undefined, undefined)).toEqual([]);
  });
});

describe("gates files", () => {
  const dir = mkdtempSync(join(tmpdir(), "warmbench-gates-file-"));
  test("one gate per line; comments and blank lines are skipped; errors name the line", () => {
    const path = join(dir, "g.txt");
    writeFileSync(path, "# budget\n\nfailed==0  # none\n  p99_ttft_ms <= 800 @pct>=50\n");
    expect(readGatesFile(path).map((g) => g.expr)).toEqual(["failed==0", "p99_ttft_ms<=800@pct>=50"]);
    writeFileSync(path, "failed==0\nbogus<1\n");
    expect(() => readGatesFile(path)).toThrow(`--gates-file ${path} line 2 "bogus<1": bogus is not a numeric key`);
    writeFileSync(path, "# nothing\n");
    expect(() => readGatesFile(path)).toThrow("no gate in it");
    expect(() => readGatesFile(join(dir, "missing.txt"))).toThrow("--gates-file: cannot read");
  });
});

describe("operators and scopes", () => {
  test("holds", () => {
    expect([holds(1, "<", 2), holds(2, "<", 2), holds(2, "<=", 2), holds(3, ">", 2), holds(2, ">=", 2), holds(2, "==", 2), holds(2, "!=", 2)]).toEqual([
      true,
      false,
      true,
      true,
      true,
      true,
      false,
    ]);
    expect(holds(NaN, "!=", 1)).toBe(false);
    expect(holds(NaN, "<", 1)).toBe(false);
  });

  test("a scope selects pcts", () => {
    const g = parseGate("failed==0@pct>=90");
    const at = (shared_prefix_pct: number) => ({ shared_prefix_pct, working_set: 1, request_rate: Infinity });
    expect([0, 89, 90, 99].map((p) => gateApplies(g, at(p)))).toEqual([false, false, true, true]);
    expect(gateApplies(parseGate("failed==0"), at(0))).toBe(true);
  });
});

describe("one pattern for a statistic's name", () => {
  test("STAT_METRIC_UNIT names warmbench's own keys too: p99_ttft_from_intended_ms is ttft_from_intended_p99_ms", () => {
    expect(parseGate("p99_ttft_from_intended_ms<=500").metric).toBe("ttft_from_intended_p99_ms");
    expect(parseGate("mean_schedule_lag_ms<=5").metric).toBe("schedule_lag_mean_ms");
    expect(parseGate("p99_client_own_lag_ms<=5").metric).toBe("client_own_lag_p99_ms");
    // The stored name still reads, and the script's keys are themselves.
    expect(parseGate("ttft_from_intended_p99_ms<=500").metric).toBe("ttft_from_intended_p99_ms");
    expect(parseGate("p99_ttft_ms<=500").metric).toBe("p99_ttft_ms");
  });

  test("a swapped name that is no key either is still refused, naming what was written", () => {
    expect(() => parseGate("p99_nothing_ms<=5")).toThrow(/p99_nothing_ms is not a numeric key/);
    expect(() => parseGate("ttft_p99_ms<=5")).toThrow(/ttft_p99_ms is not a numeric key/);
  });
});
