import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { detectTraceFormat } from "../../../src/workload/agentic/detect.ts";
import { readAgenticTraces } from "../../../src/workload/agentic/read-agentic.ts";
import { parseTraceLabCsv } from "../../../src/workload/agentic/tracelab-trace.ts";
import { usageMessage } from "../../helpers/usage-error.ts";

const DIR = join(import.meta.dir, "../../fixtures/agentic");
// Apart from the WEKA traces: a directory corpus is of one format.
const TRACELAB_CSV = join(import.meta.dir, "../../fixtures/tracelab/runner.csv");

describe("TraceLab runner CSV", () => {
  const text = readFileSync(TRACELAB_CSV, "utf8");

  test("one session per session_id, rounds in order, times and waits as the rows give them", () => {
    const ts = parseTraceLabCsv("r.csv", text, 64);
    expect(ts.map((t) => [t.id, t.steps.length, t.line])).toEqual([
      ["claude:s1", 3, 2],
      ["claude:s2", 2, 4],
    ]);
    const s1 = ts[0]!.steps.map((c) => c.kind === "call" && [c.tS, c.inputLength, c.outputLength, c.thinkTimeS, c.line]);
    expect(s1).toEqual([
      [0, 200, 30, 0, 2],
      [4, 300, 20, 1.5, 3],
      [9, 314, 12, 0, 5],
    ]);
  });

  test("invented blocks: a block wholly inside the shared prefix keeps its id, the rest are new", () => {
    const [s1, s2] = parseTraceLabCsv("r.csv", text, 64);
    const ids = s1!.steps.map((c) => (c.kind === "call" ? c.hashIds : []));
    // Round 0: 200 tokens = 3 full blocks. Round 1 shares 200: blocks 0-2 kept, block 3 (192-256) is new.
    expect(ids[0]).toEqual([0, 1, 2]);
    expect(ids[1]).toEqual([0, 1, 2, 3]);
    // Round 2 shares 250 of round 1's 300: blocks 0-2 (up to 192) kept; 192-256 crosses 250, so new.
    expect(ids[2]).toEqual([0, 1, 2, 4]);
    // Sessions never share (local ids per session).
    expect(s2!.steps.map((c) => (c.kind === "call" ? c.hashIds : []))).toEqual([[0], [0]]);
  });

  test("bad rows are refused naming file:line", () => {
    const head = "session_id,arrival_time,round_idx,prefix_len,input_len,output_len,tool_wait_after_ms";
    expect(usageMessage(() => parseTraceLabCsv("r.csv", `${head}\ns,0,0,0,10,,0\n`, 64))).toBe('r.csv:2: "output_len" must be a number, got nothing (missing)');
    expect(usageMessage(() => parseTraceLabCsv("r.csv", `${head}\ns,0,0,0,10,3,-5\n`, 64))).toBe(
      'r.csv:2: "tool_wait_after_ms" -5 is below 0 (a negative delay)',
    );
    expect(usageMessage(() => parseTraceLabCsv("r.csv", `${head}\ns,5,0,0,10,3,0\ns,2,1,10,5,3,0\n`, 64))).toStartWith(
      'r.csv:3: "arrival_time" 2 ms is before round 0',
    );
    expect(usageMessage(() => parseTraceLabCsv("r.csv", "session_id,arrival_time\ns,0\n", 64))).toBe('r.csv:1: TraceLab CSV header has no "round_idx" column');
  });
});

describe("trace format detection", () => {
  test("each format by its first record; a pretty-printed WEKA file too", () => {
    expect(detectTraceFormat("a", readFileSync(join(DIR, "trace_0187.json"), "utf8"))).toBe("weka");
    expect(detectTraceFormat("a", `{\n  "id": "x",\n  "block_size": 64,\n  "requests": []\n}`)).toBe("weka");
    expect(detectTraceFormat("a", '{"timestamp": 0, "input_length": 5, "output_length": 1, "hash_ids": [1]}\n')).toBe("mooncake");
    expect(detectTraceFormat("a", readFileSync(TRACELAB_CSV, "utf8"))).toBe("tracelab");
  });

  test("--trace-format wins over the content", () => {
    expect(detectTraceFormat("a", "anything", "mooncake")).toBe("mooncake");
  });

  test("an unknown format is refused naming file:line", () => {
    expect(usageMessage(() => detectTraceFormat("t.txt", "\n\nhello,world\n"))).toMatch(
      /^t\.txt:3: unknown trace format .* --trace-format weka\|mooncake\|tracelab$/,
    );
    expect(usageMessage(() => detectTraceFormat("t.json", '{"foo": 1}\n'))).toStartWith("t.json:1: unknown trace format");
    expect(usageMessage(() => detectTraceFormat("t.json", "  \n"))).toBe("t.json: the trace is empty");
  });
});

describe("reading a trace file by its format", () => {
  test("WEKA and TraceLab files give sessions; a Mooncake file is handed back to the replay's reader", () => {
    const weka = readAgenticTraces(join(DIR, "trace_0291.json"), { format: "auto", blockSize: 64 });
    expect(weka.format === "weka" && weka.traces.map((t) => t.id)).toEqual(["trace_0291"]);
    const lab = readAgenticTraces(TRACELAB_CSV, { format: "auto", blockSize: 64 });
    expect(lab.format === "tracelab" && lab.traces.length).toBe(2);
    const dir = mkdtempSync(join(tmpdir(), "agentic-"));
    const moon = join(dir, "m.jsonl");
    writeFileSync(moon, '{"timestamp": 0, "input_length": 5, "output_length": 1, "hash_ids": [1]}\n');
    expect(readAgenticTraces(moon, { format: "auto", blockSize: 64 })).toEqual({ format: "mooncake" });
    // Named, the format is read as named: a Mooncake row read as WEKA is refused naming its line.
    expect(usageMessage(() => readAgenticTraces(moon, { format: "weka", blockSize: 64 }))).toStartWith(`${moon}:1: "id" must be a non-empty string`);
    expect(usageMessage(() => readAgenticTraces(join(dir, "none.json"), { format: "auto", blockSize: 64 }))).toBe(
      `${join(dir, "none.json")}: cannot read the trace (ENOENT)`,
    );
    rmSync(dir, { recursive: true });
  });
});
