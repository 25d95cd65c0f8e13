/**
 * A replay's shape for the memory model, read from the parsed trace before anything is sent: requests, every
 * request's chain ids, the working set (each distinct block once; an agentic call's tail its own), the block store at
 * most the working set; an agentic corpus in more lanes than traces replays clones, each in a namespace of its own.
 * And the estimate: each term adds, so a larger trace is never estimated smaller.
 */
import { describe, expect, test } from "bun:test";
import { MEMORY_MODEL, replayMemoryBytes } from "../../../src/config/memory-model.ts";
import { agenticReplayShape, mooncakeReplayShape } from "../../../src/replay/memory-shape.ts";
import { parseTrace } from "../../../src/workload/trace.ts";
import { parseWekaTraces } from "../../../src/workload/agentic/weka-trace.ts";

const mooncake = (lines: object[], blockSize: number) =>
  parseTrace("t.jsonl", lines.map((l) => JSON.stringify(l)).join("\n"), { blockSize, skipInvalid: false, startS: 0, durationS: null, limit: null });

describe("mooncakeReplayShape", () => {
  test("counts requests, chain ids and each distinct block once", () => {
    const trace = mooncake(
      [
        { timestamp: 0, input_length: 30, output_length: 1, hash_ids: [1, 2] },
        { timestamp: 1, input_length: 40, output_length: 1, hash_ids: [1, 2, 3] },
        { timestamp: 2, input_length: 10, output_length: 1, hash_ids: [4] },
      ],
      16,
    );
    expect(mooncakeReplayShape(trace)).toEqual({ requests: 3, chainIds: 6, keptTokens: 4 * 16, workingSetTokens: 4 * 16 });
  });

  test("the block store is at most its 4096 blocks", () => {
    const lines = Array.from({ length: 5000 }, (_, i) => ({ timestamp: i, input_length: 2, output_length: 1, hash_ids: [i] }));
    const shape = mooncakeReplayShape(mooncake(lines, 2));
    expect(shape.workingSetTokens).toBe(10_000);
    expect(shape.keptTokens).toBe(4096 * 2);
  });
});

describe("agenticReplayShape", () => {
  const call = (t: number, input: number, ids: number[]) => ({ type: "n", t, in: input, out: 1, hash_ids: ids, api_time: 0 });
  // Two calls of one chain (the second appends a block) and a tail of 2 tokens on the second.
  const corpus = parseWekaTraces(
    "c.jsonl",
    `${JSON.stringify({ id: "a", block_size: 4, hash_id_scope: "local", requests: [call(0, 8, [1, 2]), call(1, 14, [1, 2, 3])] })}\n`,
  );

  test("each call's full blocks and its tail; the working set each block once and every tail", () => {
    expect(agenticReplayShape(corpus, null)).toEqual({ requests: 2, chainIds: 2 + 4, keptTokens: 3 * 4 + 2, workingSetTokens: 3 * 4 + 2 });
  });

  test("more lanes than traces: every clone's requests and blocks its own", () => {
    const one = agenticReplayShape(corpus, null);
    const five = agenticReplayShape(corpus, 5);
    expect(five).toEqual({
      requests: 5 * one.requests,
      chainIds: 5 * one.chainIds,
      keptTokens: 5 * one.keptTokens,
      workingSetTokens: 5 * one.workingSetTokens,
    });
  });
});

describe("replayMemoryBytes", () => {
  test("the replay's base plus each term", () => {
    const none = { requests: 0, chainIds: 0, keptTokens: 0, workingSetTokens: 0 };
    expect(replayMemoryBytes(none)).toBe(MEMORY_MODEL.replayBaseBytes);
    expect(replayMemoryBytes({ ...none, requests: 10 }) - replayMemoryBytes(none)).toBe(10 * MEMORY_MODEL.perReplayRequestBytes);
    expect(replayMemoryBytes({ requests: 1, chainIds: 1, keptTokens: 1, workingSetTokens: 1 })).toBeGreaterThan(replayMemoryBytes(none));
  });
});
