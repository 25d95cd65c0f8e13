/**
 * The conversation driver as a request source under the real dispatcher, with fake turns (no network): concurrency,
 * barrier, order, think time, failures, interrupt, and each turn's intended time.
 */
import { describe, expect, test } from "bun:test";
import type { RequestRecord } from "../../../src/schema/record.ts";
import { Conversation } from "../../../src/multiturn/conversation.ts";
import type { TurnPlan } from "../../../src/workload/turn-plan.ts";
import { driveConversations, type DriverHooks } from "../../../src/multiturn/driver.ts";
import { fakePacedSend } from "../../helpers/fake-paced-send.ts";
import { nowMs } from "../../../src/client/clock.ts";
import type { MultiturnOptions } from "../../../src/config/options.ts";
import { PyRandom } from "../../../src/workload/rng.ts";

const POPULATION = Uint32Array.from({ length: 1000 }, (_, i) => i);

function record(ok: boolean, failureKind: RequestRecord["failureKind"] = ok ? null : "http"): RequestRecord {
  return {
    index: 0,
    ok,
    failureKind,
    failureMessage: ok ? "" : "boom",
    httpStatus: 200,
    promptLen: 10,
    intendedMs: 0,
    startMs: 0,
    firstTokenMs: 0,
    lastEventMs: 0,
    ttftMs: 1,
    latencyMs: 2,
    outputLen: 2,
    cachedTokens: 0,
    cachedDeviceTokens: -1,
    cachedHostTokens: -1,
    cachedStorageTokens: -1,
    itlMs: new Float64Array(1),
    tokenEvents: 2,
    finishReason: "length",
    generatedText: "",
  };
}

type Event = { kind: "send" | "end" | "round"; client?: number; round: number; at: number; inFlight: number; intendedMs?: number; startMs?: number };

/** Drives fake conversations; each turn takes `turnMs(client, round)` and fails where `fails` says. */
async function drive(
  o: Partial<MultiturnOptions> & { numClients: number; numRounds: number },
  opts: { limit?: number; turnMs?: (c: number, r: number) => number; fails?: (c: number, r: number) => boolean; abortAfterMs?: number } = {},
) {
  const options = { roundBarrier: false, thinkTime: { kind: "fixed", s: 0 } as const, readyQueuePolicy: "fifo" as const, seed: 1n, ...o };
  const conversations = Array.from({ length: o.numClients }, (_, c) => new Conversation(c, 0, null, new PyRandom(BigInt(c))));
  const events: Event[] = [];
  const completed: Array<{ round: number; interrupted: boolean }> = [];
  let inFlight = 0;
  const t0 = performance.now();
  const controller = new AbortController();
  if (opts.abortAfterMs !== undefined) setTimeout(() => controller.abort(), opts.abortAfterMs);
  const hooks: DriverHooks = {
    build(conv) {
      const turn = conv.nextTurn(POPULATION, 4, 1);
      return {
        turn,
        request: { body: new Uint8Array(0), shape: { index: conv.client, promptLen: turn.promptLen, maxNewTokens: 1, requestId: String(turn.round) } },
      };
    },
    settled(conv: Conversation, turn: TurnPlan, rec: RequestRecord) {
      inFlight--;
      events.push({ kind: "end", client: conv.client, round: turn.round, at: performance.now() - t0, inFlight });
      if (rec.ok) conv.answered(turn, Uint32Array.of(7, 8), false);
      else conv.end();
    },
    roundStarted(round) {
      events.push({ kind: "round", round, at: performance.now() - t0, inFlight });
    },
    async roundComplete(round, interrupted) {
      await Bun.sleep(3); // writing a round takes time: a barrier must wait for it
      completed.push({ round, interrupted });
    },
  };
  // The engine's send without the network: the real dispatcher, each turn a timer.
  const sendTurns = fakePacedSend((taken, intendedMs) => {
    const client = taken.shape.index;
    const round = Number(taken.shape.requestId);
    inFlight++;
    events.push({ kind: "send", client, round, at: performance.now() - t0, inFlight, intendedMs, startMs: nowMs() });
    const ms = opts.turnMs?.(client, round) ?? 5;
    return new Promise<RequestRecord>((resolve) => {
      const timer = setTimeout(() => resolve(record(!(opts.fails?.(client, round) ?? false))), ms);
      controller.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve(record(false, "cancelled"));
      });
    });
  }, controller.signal);
  await driveConversations(conversations, opts.limit ?? o.numClients, options, hooks, sendTurns, controller.signal);
  return { events, completed, sends: events.filter((e) => e.kind === "send") };
}

describe("driveConversations", () => {
  test("every client runs every round, rounds complete in order, never more than the limit in flight", async () => {
    const { sends, completed, events } = await drive({ numClients: 5, numRounds: 4 }, { limit: 2, turnMs: (c) => 2 + c * 3 });
    expect(sends).toHaveLength(20);
    expect(Math.max(...events.map((e) => e.inFlight))).toBeLessThanOrEqual(2);
    expect(completed).toEqual([0, 1, 2, 3].map((round) => ({ round, interrupted: false })));
    for (let c = 0; c < 5; c++) expect(sends.filter((s) => s.client === c).map((s) => s.round)).toEqual([0, 1, 2, 3]);
  });

  test("without a barrier a fast client runs ahead; with one, no turn of round r goes before round r-1 is written", async () => {
    const slowClient0 = (c: number) => (c === 0 ? 40 : 2);
    const free = await drive({ numClients: 3, numRounds: 3 }, { turnMs: slowClient0 });
    const firstEndOf0 = free.events.find((e) => e.kind === "end" && e.client === 0)!.at;
    expect(free.sends.some((s) => s.round === 2 && s.at < firstEndOf0)).toBe(true);

    const held = await drive({ numClients: 3, numRounds: 3, roundBarrier: true }, { turnMs: slowClient0 });
    for (let round = 1; round < 3; round++) {
      const lastEndBefore = Math.max(...held.events.filter((e) => e.kind === "end" && e.round === round - 1).map((e) => e.at));
      const firstSend = Math.min(...held.sends.filter((s) => s.round === round).map((s) => s.at));
      expect(firstSend).toBeGreaterThanOrEqual(lastEndBefore + 2); // and the round's writing (3 ms) came in between
    }
  });

  test("round-robin takes clients in id order every round", async () => {
    const { sends } = await drive({ numClients: 4, numRounds: 3, roundBarrier: true, readyQueuePolicy: "round-robin" }, { limit: 1 });
    expect(sends.map((s) => s.client)).toEqual([0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]);
  });

  test("a think time spaces a client's turns, and is no part of the turn's intended time", async () => {
    const { sends } = await drive({ numClients: 1, numRounds: 3, thinkTime: { kind: "fixed", s: 0.03 } }, { turnMs: () => 1 });
    expect(sends[1]!.at - sends[0]!.at).toBeGreaterThanOrEqual(29); // Bun timers have whole-ms resolution
    expect(sends[2]!.at - sends[1]!.at).toBeGreaterThanOrEqual(29); // Bun timers have whole-ms resolution
    // The slot was free during the think time: the turn was meant to go when it became ready, not when the slot freed.
    for (const s of sends.slice(1)) {
      expect(s.startMs! - s.intendedMs!).toBeGreaterThanOrEqual(0);
      expect(s.startMs! - s.intendedMs!).toBeLessThan(5);
    }
  });

  test("a turn ready while every slot is busy is intended when the slot frees: that wait is the workload's", async () => {
    const { sends } = await drive({ numClients: 3, numRounds: 2 }, { limit: 1, turnMs: () => 10 });
    expect(sends).toHaveLength(6);
    for (const s of sends) expect(s.startMs! - s.intendedMs!).toBeLessThan(5);
  });

  test("a failed turn ends its conversation; later rounds have one turn fewer and still complete", async () => {
    const { sends, completed } = await drive({ numClients: 3, numRounds: 4, roundBarrier: true }, { fails: (c, r) => c === 1 && r === 1 });
    expect(sends.filter((s) => s.client === 1).map((s) => s.round)).toEqual([0, 1]);
    expect(sends.filter((s) => s.round === 3)).toHaveLength(2);
    expect(completed.map((c) => c.round)).toEqual([0, 1, 2, 3]);
  });

  test("an interrupt sends nothing more and writes the rounds under way as interrupted", async () => {
    const { sends, completed } = await drive({ numClients: 3, numRounds: 10 }, { turnMs: () => 20, abortAfterMs: 50 });
    expect(sends.length).toBeLessThan(30);
    expect(completed.length).toBeGreaterThan(0);
    expect(completed.at(-1)!.interrupted).toBe(true);
    expect(completed.map((c) => c.round)).toEqual(completed.map((_, k) => k));
  });
});
