/** `warmbench multiturn` flags: defaults, the conversation's shape, and one UsageError naming the flag for bad ones. */
import { describe, expect, test } from "bun:test";
import { UsageError } from "../../../src/errors.ts";
import { parseMultiturnOptions } from "../../../src/cli/multiturn-options.ts";
import { parseThinkTime } from "../../../src/config/flag-values.ts";
import { multiturnInFlight } from "../../../src/config/options.ts";
import { parseWorkingSets } from "../../../src/config/flag-values.ts";
import { MULTITURN_DEFAULTS } from "../../../src/config/defaults.ts";

const parse = (flags: Record<string, string | boolean>) => parseMultiturnOptions({ model: "tok.json", ...flags }, {});

describe("parseMultiturnOptions", () => {
  test("defaults are bench_multiturn.py's where a flag means the same", () => {
    const o = parse({});
    expect(o).toMatchObject({
      numClients: 256,
      numRounds: 5,
      turnTokens: 512,
      firstTurnTokens: 512,
      sharedSystemTokens: 0,
      outputLen: 64,
      maxConcurrency: 128,
      roundBarrier: false,
      readyQueuePolicy: "random",
      workingSet: 1,
      thinkTime: { kind: "fixed", s: 0 },
      seed: 42n,
      verifyCache: "warn",
    });
    expect(o.numClients).toBe(MULTITURN_DEFAULTS.numClients);
    expect(multiturnInFlight(o)).toBe(128);
    expect(multiturnInFlight({ maxConcurrency: 0, numClients: 7 })).toBe(7);
    expect(multiturnInFlight({ maxConcurrency: 64, numClients: 7 })).toBe(7);
  });

  test("the conversation's shape", () => {
    const o = parse({
      "num-clients": "4",
      "num-rounds": "3",
      "turn-tokens": "100",
      "first-turn-tokens": "2000",
      "shared-system-tokens": "64",
      "round-barrier": true,
      "ready-queue-policy": "round-robin",
      "working-set": "2",
      "think-time": "exp:0.5",
    });
    expect(o).toMatchObject({
      numClients: 4,
      numRounds: 3,
      turnTokens: 100,
      firstTurnTokens: 2000,
      sharedSystemTokens: 64,
      roundBarrier: true,
      readyQueuePolicy: "round-robin",
      workingSet: 2,
      thinkTime: { kind: "exp", meanS: 0.5 },
    });
  });

  test.each([
    [{ "num-rounds": "0" }, /--num-rounds 0: each client needs at least one round/],
    [{ "num-clients": "0" }, /--num-clients 0/],
    [{ "turn-tokens": "0" }, /--turn-tokens 0/],
    [{ "working-set": "0" }, /--working-set 0: a working set holds at least one system prompt/],
    [{ "working-set": "3" }, /--working-set 3: the working set rotates system prompts, so it needs --shared-system-tokens > 0/],
    [{ "ready-queue-policy": "lifo" }, /--ready-queue-policy: "lifo" is not supported \(choose from: fifo, random, round-robin\)/],
    [{ "think-time": "soon" }, /--think-time/],
    [{ "shared-system-tokens": "-1" }, /--shared-system-tokens: must be >= 0/],
  ])("%p is refused", (flags, message) => {
    expect(() => parse(flags as Record<string, string>)).toThrow(UsageError);
    expect(() => parse(flags as Record<string, string>)).toThrow(message);
  });
});

describe("parseThinkTime", () => {
  test("fixed, exponential, uniform", () => {
    expect(parseThinkTime("1.5")).toEqual({ kind: "fixed", s: 1.5 });
    expect(parseThinkTime("exp:2")).toEqual({ kind: "exp", meanS: 2 });
    expect(parseThinkTime("uniform:0.1:0.3")).toEqual({ kind: "uniform", lowS: 0.1, highS: 0.3 });
    expect(() => parseThinkTime("uniform:0.3:0.1")).toThrow(/upper bound is below the lower one/);
    expect(() => parseThinkTime("gauss:1")).toThrow(/expected seconds \(0.5\), exp:MEAN or uniform:LOW:HIGH/);
    expect(() => parseThinkTime("-1")).toThrow(/must be >= 0/);
  });
});

describe("parseWorkingSets (the sweep's --working-set)", () => {
  test("a list of sizes; 0 is refused", () => {
    expect(parseWorkingSets("1")).toEqual([1]);
    expect(parseWorkingSets("1, 4,16")).toEqual([1, 4, 16]);
    expect(() => parseWorkingSets("4,0")).toThrow(/--working-set 0: a working set holds at least one shared prefix/);
    expect(() => parseWorkingSets(",")).toThrow(/no working-set size given/);
  });
});
