import { describe, expect, test } from "bun:test";
import { runPool } from "../../../src/client/pool.ts";

/** A task that tracks how many run at once and records start order. */
function tracker(durationMs: (i: number) => number) {
  const state = { inFlight: 0, maxInFlight: 0, started: [] as number[] };
  const task = async (i: number): Promise<string> => {
    state.started.push(i);
    state.inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    await Bun.sleep(durationMs(i));
    state.inFlight--;
    return `r${i}`;
  };
  return { state, task };
}

describe("runPool", () => {
  test("never exceeds the concurrency, starts in index order, returns results by index", async () => {
    const { state, task } = tracker((i) => (i % 3) * 7 + 1);
    const settled: string[] = [];
    const results = await runPool(20, 4, task, { onSettled: (i, r) => settled.push(`${i}:${r}`) });
    expect(state.maxInFlight).toBe(4);
    expect(state.started).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(results).toEqual(Array.from({ length: 20 }, (_, i) => `r${i}`));
    expect(settled.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `${i}:r${i}`).sort());
  });

  test("concurrency above count, and count 0", async () => {
    const { state, task } = tracker(() => 5);
    expect(await runPool(3, 100, task)).toEqual(["r0", "r1", "r2"]);
    expect(state.maxInFlight).toBe(3);
    expect(await runPool(0, 4, task)).toEqual([]);
  });

  test("abort: no new task starts, started ones finish, the rest stay undefined", async () => {
    const { state, task } = tracker(() => 20);
    const controller = new AbortController();
    const abortingAt3 = (i: number) => {
      if (i === 3) controller.abort();
      return task(i);
    };
    const results = await runPool(10, 2, abortingAt3, { signal: controller.signal });
    expect(state.started).toEqual([0, 1, 2, 3]);
    expect(results.slice(0, 4)).toEqual(["r0", "r1", "r2", "r3"]);
    expect(results.slice(4)).toEqual(Array(6).fill(undefined));
    expect(results.length).toBe(10);
  });

  test("an already aborted signal starts nothing", async () => {
    const { state, task } = tracker(() => 1);
    const results = await runPool(3, 2, task, { signal: AbortSignal.abort() });
    expect(state.started).toEqual([]);
    expect(results).toEqual([undefined, undefined, undefined]);
  });

  test("a rejecting task stops new starts and rejects after the others settle", async () => {
    const { state, task } = tracker(() => 10);
    const failing = async (i: number) => {
      if (i === 1) throw new Error("boom");
      return task(i);
    };
    await expect(runPool(10, 2, failing)).rejects.toThrow("boom");
    // Task 0 was running when task 1 failed: it finished before runPool rejected; nothing else started.
    expect(state.started).toEqual([0]);
    expect(state.inFlight).toBe(0);
  });

  test("bad arguments", async () => {
    await expect(runPool(1, 0, async () => 1)).rejects.toThrow(RangeError);
    await expect(runPool(-1, 1, async () => 1)).rejects.toThrow(RangeError);
  });
});
