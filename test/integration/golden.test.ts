/**
 * Before/after guard (issue 18, item 6): the compiled binary's JSONL for small deterministic mock runs (a sweep on
 * each backend the mock speaks, a rate sweep, a working-set sweep, a multiturn run) equals, key by key, what the
 * binary wrote before the layer refactor (test/fixtures/golden/). Timings are compared by type only; keys added on
 * purpose are listed in test/helpers/golden.ts.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { CHANGED_ON_PURPOSE, GOLDEN_DIR, GOLDEN_RUNS, goldenDiff, runGolden } from "../helpers/golden.ts";
import { readJsonl } from "../helpers/results.ts";

describe("the binary's JSONL equals the recorded one", () => {
  for (const run of GOLDEN_RUNS) {
    test(run.name, async () => {
      const before = readJsonl(join(GOLDEN_DIR, `${run.name}.jsonl`), { validate: false });
      const after = readJsonl(await runGolden(run));
      expect(before.length).toBeGreaterThan(0);
      const problems = goldenDiff(before, after);
      const meant = CHANGED_ON_PURPOSE[run.name]?.changes ?? [];
      expect(problems.filter((p) => !meant.includes(p))).toEqual([]);
      // Each change listed on purpose still happens (else the list is stale).
      expect(meant.filter((p) => !problems.includes(p))).toEqual([]);
    });
  }
});

describe("the comparison itself", () => {
  const line = { completed: 6, mean_ttft_ms: 1.5, run: { options: { seed: 11 }, started_at: "x" }, hdr: { ttft: [1, 2] } };
  test("a changed exact value, a missing key, a new key and a changed type are each caught", () => {
    expect(goldenDiff(line, { ...line, completed: 5 })).toEqual([".completed: 6 became 5"]);
    expect(goldenDiff(line, { ...line, run: { options: {}, started_at: "x" } })).toEqual([".run.options.seed: missing"]);
    expect(goldenDiff(line, { ...line, extra: 1 })).toEqual([".extra: new key (list it in ADDED_KEYS if on purpose)"]);
    expect(goldenDiff(line, { ...line, mean_ttft_ms: "1.5" })).toEqual([".mean_ttft_ms: number became string"]);
    // A flag's echo is exact even when its name looks like a timing.
    const echo = { run: { options: { settle_ms: 0, base_url: "a" } } };
    expect(goldenDiff(echo, { run: { options: { settle_ms: 5, base_url: "b" } } })).toEqual([".run.options.settle_ms: 0 became 5"]);
  });
  test("timings, timing trees and the keys added on purpose pass", () => {
    expect(goldenDiff(line, { ...line, mean_ttft_ms: 9, run: { options: { seed: 11 }, started_at: "y" }, hdr: { ttft: [7] }, schema_version: 1 })).toEqual([]);
  });
});
