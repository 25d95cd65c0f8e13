import { expect, test } from "bun:test";
import type { RunInfo } from "../../../src/schema/nested.ts";
import { differingKeys, flattenHeader, labelRuns } from "../../../src/report/labels.ts";

const header = (options: Record<string, unknown>, serverInfo: Record<string, unknown> | null): RunInfo => ({
  warmbench_version: "0.1.0",
  started_at: new Date().toISOString(),
  options,
  served_model: null,
  page_size: 16,
  page_size_source: "server",
  server_info_source: "/server_info",
  server_version: "0.5.17",
  server_info: serverInfo,
  engine: {
    name: "sglang",
    source: "flag",
    evidence: "/server_info",
    endpoint: "/generate",
    prompt_encoding: "token_ids",
    cache_slots: null,
    max_running: null,
    flush_gap: null,
  },
});

const server = (cp: number, port: number) => ({
  chunked_prefill_size: cp,
  port,
  random_seed: port * 7,
  startup_time: port / 3,
  internal_states: [{ running_requests: port }],
  tp_size: 1,
});
const options = (out: string) => ({ backend: "sglang", base_url: `http://h:${out.length}`, output_file: out, num_prompts: 64, gates: [out] });

test("a shell loop over a server flag is labelled by that flag alone (ports, seeds, times and paths ignored)", () => {
  const runs = [4096, 8192, 2048].map((cp, i) => ({ header: header(options(`cp-${cp}.jsonl`), server(cp, 30000 + i)), fallbackName: `cp-${cp}.jsonl` }));
  expect(labelRuns(runs)).toEqual({
    labels: ["chunked_prefill_size=4096", "chunked_prefill_size=8192", "chunked_prefill_size=2048"],
    differing: ["server_info.chunked_prefill_size"],
  });
});

test("without headers or differences, runs keep their file names; repeats stay unique", () => {
  expect(
    labelRuns([
      { header: undefined, fallbackName: "a.jsonl" },
      { header: undefined, fallbackName: "b.jsonl" },
    ]).labels,
  ).toEqual(["a.jsonl", "b.jsonl"]);
  const same = header(options("x"), server(1, 1));
  expect(
    labelRuns([
      { header: same, fallbackName: "r.jsonl" },
      { header: same, fallbackName: "r.jsonl" },
    ]).labels,
  ).toEqual(["r.jsonl [1]", "r.jsonl [2]"]);
  const runs = [1, 2, 2].map((cp, i) => ({ header: header(options("x"), server(cp, 1)), fallbackName: `f${i}` }));
  expect(labelRuns(runs).labels).toEqual(["chunked_prefill_size=1", "chunked_prefill_size=2 (f1)", "chunked_prefill_size=2 (f2)"]);
});

test("a label shows the fewest settings that tell the runs apart (… when there are more); a missing key is a difference", () => {
  const runs = [
    { backend: "sglang", x: 1, y: 1 },
    { backend: "sglang", x: 2, y: 2 },
    { backend: "vllm", x: 3, y: 3 },
  ].map((o, i) => ({ header: header(o, null), fallbackName: `r${i}` }));
  expect(labelRuns(runs).labels).toEqual(["x=1, …", "x=2, …", "x=3, …"]);
  const grid = [
    [1, 1],
    [1, 2],
    [2, 1],
    [2, 2],
  ].map(([a, b], i) => ({ header: header({ a, b }, null), fallbackName: `g${i}` }));
  expect(labelRuns(grid).labels).toEqual(["a=1, b=1", "a=1, b=2", "a=2, b=1", "a=2, b=2"]);
  expect(differingKeys([flattenHeader(header({ x: 1 }, null)), flattenHeader(header({}, null))])).toEqual(["options.x"]);
});
