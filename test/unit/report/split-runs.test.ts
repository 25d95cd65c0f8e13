import { expect, test } from "bun:test";
import type { StoredSweepLine } from "../../../src/metrics/sweep-line.ts";
import { splitByCell, type ReportRun } from "../../../src/report/runs.ts";

const line = (pct: number, over: Record<string, unknown> = {}) => ({ shared_prefix_pct: pct, request_rate: Infinity, ...over }) as unknown as StoredSweepLine;
const run = (pcts: StoredSweepLine[]): ReportRun => ({
  file: "a.jsonl",
  runId: "r",
  kind: "sweep",
  header: undefined,
  pcts,
  rounds: [],
  ttftModel: null,
  label: "a.jsonl",
});

test("a rate sweep becomes one series per rate, each over its pcts", () => {
  const lines = [0, 50].flatMap((pct) => [line(pct, { request_rate: 2 }), line(pct, { request_rate: 8 }), line(pct)]);
  const series = splitByCell(run(lines));
  expect(series.map((s) => s.label)).toEqual(["a.jsonl @ 2 req/s", "a.jsonl @ 8 req/s", "a.jsonl @ inf"]);
  for (const s of series) expect(s.pcts.map((l) => l.shared_prefix_pct)).toEqual([0, 50]);
});

test("working sets split too; a run of one cell stays whole", () => {
  const ws = splitByCell(run([line(0), line(0, { working_set: 4 }), line(50), line(50, { working_set: 4 })]));
  expect(ws.map((s) => s.label)).toEqual(["a.jsonl ws=1", "a.jsonl ws=4"]);
  const plain = run([line(0), line(50)]);
  expect(splitByCell(plain)).toEqual([plain]);
});
