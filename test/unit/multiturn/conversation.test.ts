/** A conversation's turns: history growth, expected cached tokens, approximate answers, ready-queue policies. */
import { describe, expect, test } from "bun:test";
import { Conversation } from "../../../src/multiturn/conversation.ts";
import { checkConversationFits, expectedTurnCached, promptLenOf } from "../../../src/multiturn/plan.ts";
import { ReadyQueue } from "../../../src/multiturn/ready-queue.ts";
import { drawThinkMs, turnRandom } from "../../../src/multiturn/rngs.ts";
import { NO_SERVER_INFO } from "../../../src/backends/server-info.ts";
import type { ServerProfile } from "../../../src/backends/types.ts";
import { PyRandom } from "../../../src/workload/rng.ts";
import { serializeIds } from "../../../src/workload/prompts.ts";

const POPULATION = Uint32Array.from({ length: 5000 }, (_, i) => i);
const decoder = new TextDecoder();
const idsOf = (parts: readonly Uint8Array[]) =>
  parts
    .map((p) => decoder.decode(p))
    .join(",")
    .split(",")
    .map(Number);

describe("Conversation", () => {
  test("each turn is the history plus new ids; expected cached = history but the last output token, in whole pages", () => {
    const system = Uint32Array.of(1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
    const conv = new Conversation(0, 0, { digits: serializeIds(system), length: 10 }, new PyRandom(1n));
    const t0 = conv.nextTurn(POPULATION, 20, 4);
    expect(t0.promptLen).toBe(30);
    expect(t0.expectedCachedTokens).toBe(8); // the system prompt, paged
    expect(idsOf(t0.parts).slice(0, 10)).toEqual(Array.from(system));
    conv.answered(t0, Uint32Array.of(900, 901, 902, 903, 904), false);
    const t1 = conv.nextTurn(POPULATION, 20, 4);
    expect(t1.round).toBe(1);
    expect(t1.historyLen).toBe(35);
    expect(t1.promptLen).toBe(55);
    expect(t1.expectedCachedTokens).toBe(32); // 35 - 1 = 34 -> 32
    expect(t1.minCachedTokens).toBe(32);
    expect(idsOf(t1.parts).slice(0, 35)).toEqual([...idsOf(t0.parts), 900, 901, 902, 903, 904]);
  });

  test("an approximate answer keeps the expectation but only the previous prompt is required", () => {
    const conv = new Conversation(3, 0, null, new PyRandom(2n));
    const t0 = conv.nextTurn(POPULATION, 40, 16);
    expect(t0.expectedCachedTokens).toBe(0);
    conv.answered(t0, Uint32Array.of(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), true);
    const t1 = conv.nextTurn(POPULATION, 40, 16);
    expect(t1.approximate).toBe(true);
    expect(t1.expectedCachedTokens).toBe(48); // 50 - 1 -> 48
    expect(t1.minCachedTokens).toBe(32); // the 40-token prompt -> 32
  });

  test("a client's turns come from its own stream: the same ids whatever happens to other clients", () => {
    const a = new Conversation(5, 0, null, turnRandom(42n, 5));
    const b = new Conversation(5, 0, null, turnRandom(42n, 5));
    const other = new Conversation(6, 0, null, turnRandom(42n, 6));
    other.nextTurn(POPULATION, 100, 1);
    expect(idsOf(a.nextTurn(POPULATION, 30, 1).parts)).toEqual(idsOf(b.nextTurn(POPULATION, 30, 1).parts));
    expect(idsOf(new Conversation(6, 0, null, turnRandom(42n, 6)).nextTurn(POPULATION, 30, 1).parts)).not.toEqual(idsOf(a.nextTurn(POPULATION, 30, 1).parts));
  });
});

describe("plan", () => {
  const shape = { sharedSystemTokens: 100, firstTurnTokens: 500, turnTokens: 50, outputLen: 20, numRounds: 4 };
  const server = (contextLength: number | null, maxReqInputLen: number | null = null): ServerProfile => ({
    info: { ...NO_SERVER_INFO, source: "/server_info", contextLength, maxReqInputLen },
    model: null,
    pageSize: 1,
    pageSizeSource: "server",
    textMode: "cumulative",
    warnings: [],
  });

  test("prompt lengths and the context check", () => {
    expect(promptLenOf(shape, 0)).toBe(600);
    expect(promptLenOf(shape, 3)).toBe(810);
    expect(() => checkConversationFits(shape, server(830))).not.toThrow();
    expect(() => checkConversationFits(shape, server(829))).toThrow(/last turn's prompt would be 810 tokens.*830 > the model's context length 829/);
    expect(() => checkConversationFits(shape, server(null, 810))).toThrow(/at or over the server's max_req_input_len 810/);
    expect(() => checkConversationFits(shape, server(null))).not.toThrow();
  });

  test("expected cached tokens are capped at the prompt minus one", () => {
    expect(expectedTurnCached(100, true, 101, 1)).toBe(99);
    expect(expectedTurnCached(100, false, 101, 1)).toBe(100);
    expect(expectedTurnCached(100, false, 100, 1)).toBe(99);
  });
});

describe("ReadyQueue", () => {
  test("fifo, round-robin and seeded random", () => {
    const fifo = new ReadyQueue("fifo", 5, new PyRandom(1n));
    for (const c of [3, 1, 4]) fifo.push(c);
    expect([fifo.pop(), fifo.pop(), fifo.pop(), fifo.pop()]).toEqual([3, 1, 4, undefined]);

    const rr = new ReadyQueue("round-robin", 5, new PyRandom(1n));
    for (const c of [4, 2, 0]) rr.push(c);
    expect(rr.pop()).toBe(0);
    rr.push(1);
    expect([rr.pop(), rr.pop(), rr.pop()]).toEqual([1, 2, 4]);

    const order = (seed: bigint) => {
      const q = new ReadyQueue("random", 8, new PyRandom(seed));
      for (let c = 0; c < 8; c++) q.push(c);
      return Array.from({ length: 8 }, () => q.pop());
    };
    expect(order(5n)).toEqual(order(5n));
    expect(order(5n).sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(order(5n)).not.toEqual(order(6n));
  });

  test("think times", () => {
    const rng = new PyRandom(3n);
    expect(drawThinkMs({ kind: "fixed", s: 0.25 }, rng)).toBe(250);
    const uni = Array.from({ length: 200 }, () => drawThinkMs({ kind: "uniform", lowS: 0.1, highS: 0.2 }, rng));
    expect(Math.min(...uni)).toBeGreaterThanOrEqual(100);
    expect(Math.max(...uni)).toBeLessThan(200);
    const exp = Array.from({ length: 4000 }, () => drawThinkMs({ kind: "exp", meanS: 0.5 }, rng));
    const mean = exp.reduce((a, b) => a + b, 0) / exp.length;
    expect(mean).toBeGreaterThan(450);
    expect(mean).toBeLessThan(550);
  });
});
