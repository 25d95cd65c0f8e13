import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseWekaTraces } from "../../../src/workload/agentic/weka-trace.ts";
import type { AgenticStep } from "../../../src/workload/agentic/session-tree.ts";
import { usageMessage } from "../../helpers/usage-error.ts";

const DIR = join(import.meta.dir, "../../fixtures/agentic");
const read = (name: string) => parseWekaTraces(name, readFileSync(join(DIR, name), "utf8"));

const count = (steps: AgenticStep[]): { calls: number; subagents: number } =>
  steps.reduce(
    (acc, s) => {
      if (s.kind === "call") return { calls: acc.calls + 1, subagents: acc.subagents };
      const inner = count(s.steps);
      return { calls: acc.calls + inner.calls, subagents: acc.subagents + 1 + inner.subagents };
    },
    { calls: 0, subagents: 0 },
  );

describe("WEKA reader on the eight real traces", () => {
  // Counts from the files (python3 json: top-level n/s requests + the requests inside each wrapper).
  const expected: Record<string, { calls: number; subagents: number }> = {
    "trace_0007.json": { calls: 12, subagents: 0 },
    "trace_0040.json": { calls: 6, subagents: 0 },
    "trace_0061.json": { calls: 6, subagents: 0 },
    "trace_0087.json": { calls: 24, subagents: 0 },
    "trace_0187.json": { calls: 3, subagents: 0 },
    "trace_0277.json": { calls: 9 + 44, subagents: 4 },
    "trace_0291.json": { calls: 20 + 12, subagents: 2 },
    "trace_0504.json": { calls: 3, subagents: 0 },
  };
  for (const [name, want] of Object.entries(expected)) {
    test(`${name}: ${want.calls} requests, ${want.subagents} subagents, 64-token blocks`, () => {
      const traces = read(name);
      expect(traces.length).toBe(1);
      const t = traces[0]!;
      expect(t.id).toBe(name.replace(".json", ""));
      expect(t.blockSize).toBe(64);
      expect(t.hashIdScope).toBe("local");
      expect(t.line).toBe(1);
      expect(count(t.steps)).toEqual(want);
    });
  }

  test("trace_0277: the wrappers' fields and their inner calls, as the file has them", () => {
    const t = read("trace_0277.json")[0]!;
    const subs = t.steps.filter((s) => s.kind === "subagent");
    expect(subs.map((s) => [s.agentId, s.tS, s.durationMs, s.steps.length])).toEqual([
      ["agent_001", 79.224, 59750, 4],
      ["agent_002", 183.906, 164445, 12],
      ["agent_003", 211.347, 191873, 17],
      ["agent_004", 723.533, 337933, 11],
    ]);
    const first = subs[0]!.steps[0]!;
    expect(first.kind === "call" && [first.tS, first.inputLength, first.hashIds.length, first.thinkTimeS, first.apiTimeS]).toEqual([0, 11651, 182, 0, 2.16]);
    expect(first.at).toBe("requests[1].requests[0]");
  });
});

describe("WEKA reader: layouts and bad input", () => {
  const call = (t: number, more: Record<string, unknown> = {}) => ({ t, type: "n", in: 130, out: 5, hash_ids: [1, 2], think_time: 0, api_time: 1, ...more });
  const rec = (more: Record<string, unknown> = {}) => ({ id: "a", block_size: 64, hash_id_scope: "local", requests: [call(0), call(3)], ...more });

  test("one record per line (traces.jsonl): each trace names its line", () => {
    const text = `${JSON.stringify(rec({ id: "x" }))}\n\n${JSON.stringify(rec({ id: "y", hash_id_scope: "global", block_size: 16, requests: [call(0, { in: 40, hash_ids: [7, 8] })] }))}\n`;
    const ts = parseWekaTraces("c.jsonl", text);
    expect(ts.map((t) => [t.id, t.line, t.blockSize, t.hashIdScope])).toEqual([
      ["x", 1, 64, "local"],
      ["y", 3, 16, "global"],
    ]);
  });

  test("a pretty-printed record is one trace from its first line; a trailing partial block id is accepted", () => {
    const ts = parseWekaTraces("p.json", `\n${JSON.stringify(rec({ requests: [call(0, { hash_ids: [1, 2, 3] })] }), null, 2)}`);
    expect(ts.length).toBe(1);
    expect(ts[0]!.line).toBe(2);
  });

  test("nested subagents are read as nested chains", () => {
    const inner = { type: "subagent", t: 2, agent_id: "b", duration_ms: 1000, requests: [call(0)] };
    const outer = { type: "subagent", t: 5, agent_id: "a", duration_ms: 4000, requests: [call(0), inner, call(2)] };
    const t = parseWekaTraces("n.json", JSON.stringify(rec({ requests: [call(0), outer, call(6)] })))[0]!;
    const o = t.steps[1]!;
    expect(o.kind === "subagent" && o.steps[1]!.kind === "subagent" && o.steps[1]!.agentId).toBe("b");
    expect(count(t.steps)).toEqual({ calls: 5, subagents: 2 });
  });

  const bad: [string, string, RegExp][] = [
    [
      "a missing field (in)",
      JSON.stringify(rec({ requests: [call(0), { t: 3, type: "n", out: 5, hash_ids: [1, 2] }] })),
      /^b\.jsonl:1: requests\[1\]: "in" must be an integer >= 1, got nothing \(missing\)$/,
    ],
    ["a missing id", JSON.stringify(rec({ id: undefined })), /^b\.jsonl:1: "id" must be a non-empty string/],
    [
      "a negative think_time",
      JSON.stringify(rec({ requests: [call(0), call(3, { think_time: -1 })] })),
      /^b\.jsonl:1: requests\[1\]: "think_time" is negative \(-1 s\)/,
    ],
    [
      "a call before the previous one",
      JSON.stringify(rec({ requests: [call(5), call(3)] })),
      /^b\.jsonl:1: requests\[1\]: "t" 3 s is before the previous call's 5 s \(a negative delay/,
    ],
    [
      "a subagent with no requests",
      JSON.stringify(rec({ requests: [call(0), { type: "subagent", t: 2, agent_id: "a", duration_ms: 1, requests: [] }] })),
      /^b\.jsonl:1: requests\[1\]: a subagent with no requests$/,
    ],
    ["a block size of 0", JSON.stringify(rec({ block_size: 0 })), /^b\.jsonl:1: "block_size" must be an integer >= 1 \(tokens per hash id\), got 0$/],
    [
      "hash ids that do not fit in",
      JSON.stringify(rec({ requests: [call(0, { hash_ids: [1] })] })),
      /^b\.jsonl:1: requests\[0\]: "in" 130 needs floor\(130\/64\) = 2 hash ids/,
    ],
    [
      "an unknown request type",
      JSON.stringify(rec({ requests: [call(0, { type: "x" })] })),
      /^b\.jsonl:1: requests\[0\]: "type" must be "n", "s" or "subagent"/,
    ],
    ["a bad scope", JSON.stringify(rec({ hash_id_scope: "team" })), /^b\.jsonl:1: "hash_id_scope" must be "local" or "global"/],
  ];
  for (const [what, text, want] of bad) {
    test(`refused, naming file:line: ${what}`, () => expect(usageMessage(() => parseWekaTraces("b.jsonl", text))).toMatch(want));
  }

  test("the second line's error names line 2 of a JSONL corpus", () => {
    const text = `${JSON.stringify(rec())}\n${JSON.stringify(rec({ block_size: 0 }))}\n`;
    expect(usageMessage(() => parseWekaTraces("c.jsonl", text))).toStartWith("c.jsonl:2: ");
    expect(usageMessage(() => parseWekaTraces("c.jsonl", `${JSON.stringify(rec())}\n{nope\n`))).toStartWith("c.jsonl:2: not JSON");
  });
});
