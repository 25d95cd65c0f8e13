import { describe, expect, test } from "bun:test";
import { checkContext, parseTrace, skippedText, type TraceOptions } from "../../../src/workload/trace.ts";
import { generateTrace, traceText } from "../../helpers/mooncake-trace.ts";
import { usageMessage } from "../../helpers/usage-error.ts";

const opts: TraceOptions = { blockSize: 512, skipInvalid: false, startS: 0, durationS: null, limit: null };
const good = (ts: number, len = 700, ids = [1, 2]) => JSON.stringify({ timestamp: ts, input_length: len, output_length: 5, hash_ids: ids });

describe("parseTrace", () => {
  test("reads a generated trace: every line, in order, with its line number", () => {
    const lines = generateTrace({
      blockSize: 16,
      systems: 2,
      systemBlocks: 2,
      conversations: 4,
      turns: 3,
      maxTurnTokens: 40,
      turnGapMs: 500,
      startGapMs: 100,
      outputLength: 4,
      seed: 1,
    });
    const t = parseTrace("t.jsonl", traceText(lines), { ...opts, blockSize: 16 });
    expect(t.requests.length).toBe(12);
    expect(t.requests.map((r) => r.inputLength)).toEqual(lines.map((l) => l.input_length));
    expect(t.requests.map((r) => r.line)).toEqual(lines.map((_, i) => i + 1));
    expect(t.requests.map((r) => r.index)).toEqual(lines.map((_, i) => i));
  });

  test("bad lines name the file and the line", () => {
    const text = (bad: string) => [good(0), "", good(10), bad, good(30)].join("\n");
    expect(usageMessage(() => parseTrace("a.jsonl", text("{nope"), opts))).toStartWith("a.jsonl:4: not JSON");
    expect(usageMessage(() => parseTrace("a.jsonl", text(good(20, 700, [1])), opts))).toBe(
      "a.jsonl:4: input_length 700 needs ceil(700/512) = 2 hash ids at --block-size 512, the line has 1 (--skip-invalid drops such lines)",
    );
    expect(usageMessage(() => parseTrace("a.jsonl", text(good(5)), opts))).toStartWith("a.jsonl:4: timestamp 5 ms is before the previous request's 10 ms");
    expect(usageMessage(() => parseTrace("a.jsonl", text('{"timestamp":20,"input_length":0,"output_length":1,"hash_ids":[]}'), opts))).toStartWith(
      'a.jsonl:4: "input_length" must be',
    );
    expect(usageMessage(() => parseTrace("a.jsonl", text('{"timestamp":20,"input_length":3,"output_length":0,"hash_ids":[1]}'), opts))).toStartWith(
      'a.jsonl:4: "output_length" must be',
    );
    expect(usageMessage(() => parseTrace("a.jsonl", text('{"timestamp":20,"input_length":3,"output_length":1,"hash_ids":[-1]}'), opts))).toStartWith(
      'a.jsonl:4: "hash_ids" must be',
    );
    expect(usageMessage(() => parseTrace("a.jsonl", text("[1]"), opts))).toStartWith("a.jsonl:4: expected a JSON object");
  });

  test("--block-size changes what fits", () => {
    expect(usageMessage(() => parseTrace("b.jsonl", good(0, 700, [1, 2]), { ...opts, blockSize: 16 }))).toStartWith(
      "b.jsonl:1: input_length 700 needs ceil(700/16) = 44",
    );
  });

  test("--skip-invalid drops and counts by reason; decreasing timestamps are judged against the last kept line", () => {
    const text = [good(0), "{x", good(10, 700, [1]), good(20), good(15), good(30)].join("\n");
    const t = parseTrace("c.jsonl", text, { ...opts, skipInvalid: true });
    expect(t.requests.map((r) => r.line)).toEqual([1, 4, 6]);
    expect(t.skipped).toEqual({ malformed: 1, hash_ids_length: 1, decreasing_timestamp: 1 });
    expect(skippedText(t.skipped)).toBe("3 (1 malformed, 1 hash_ids_length, 1 decreasing_timestamp)");
    expect(skippedText({})).toBeNull();
  });

  test("--start, --duration and --limit slice in trace seconds; the slice is renumbered", () => {
    const text = [0, 1000, 1000, 2500, 4000].map((ts) => good(ts)).join("\n");
    const slice = parseTrace("d.jsonl", text, { ...opts, startS: 1, durationS: 2 });
    expect(slice.requests.map((r) => [r.line, r.index])).toEqual([
      [2, 0],
      [3, 1],
      [4, 2],
    ]);
    expect(parseTrace("d.jsonl", text, { ...opts, startS: 1, limit: 2 }).requests.map((r) => r.line)).toEqual([2, 3]);
    expect(usageMessage(() => parseTrace("d.jsonl", text, { ...opts, startS: 9 }))).toBe("d.jsonl: --start 9 selects no request");
    expect(usageMessage(() => parseTrace("e.jsonl", "\n\n", opts))).toBe("e.jsonl: no valid request in the trace");
  });

  test("checkContext: a request longer than the model's context is refused by line, or dropped and counted", () => {
    const t = parseTrace("f.jsonl", [good(0, 700), good(1, 1000), good(2, 600)].join("\n"), opts);
    expect(checkContext(t, null, false)).toBe(t);
    expect(checkContext(t, 1005, false)).toBe(t);
    expect(usageMessage(() => checkContext(t, 1004, false))).toBe(
      "f.jsonl:2: input_length 1000 + output_length 5 exceeds the model's context of 1004 tokens (--skip-invalid drops such lines)",
    );
    const kept = checkContext(t, 800, true);
    expect(kept.requests.map((r) => [r.line, r.index])).toEqual([
      [1, 0],
      [3, 1],
    ]);
    expect(kept.skipped).toEqual({ too_long: 1 });
  });
});
