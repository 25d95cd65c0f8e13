import { describe, expect, test } from "bun:test";
import { nowMs } from "../../../src/client/clock.ts";
import { dispatch, type DispatchOptions } from "../../../src/client/dispatcher.ts";

/** Tasks that track what runs at once and when each started, taking `durationMs(i)`. */
function tracker(durationMs: (i: number) => number) {
  const state = { inFlight: 0, maxInFlight: 0, started: [] as Array<{ index: number; intendedMs: number; atMs: number }> };
  const start = async (index: number, intendedMs: number): Promise<number> => {
    state.started.push({ index, intendedMs, atMs: nowMs() });
    state.inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    await Bun.sleep(durationMs(index));
    state.inFlight--;
    return index * 10;
  };
  return { state, start };
}

const base = { spinMs: 0.3, isReady: () => true };

describe("dispatch, closed loop (no arrivals)", () => {
  test("a source that ends early (exhausted) ends the line once its requests in flight have; none waits for the rest", async () => {
    const { state, start } = tracker(() => 5);
    let started = 0;
    const run = dispatch({
      ...base,
      count: 10,
      concurrency: 2,
      arrivalsMs: null,
      start: (i, at) => {
        started++;
        return start(i, at);
      },
      // Four requests were all it had: the other six never become ready.
      isReady: () => started < 4,
      exhausted: () => started >= 4,
      keepResults: false,
    });
    expect(await run.done).toEqual([]);
    expect(state.started.map((s) => s.index)).toEqual([0, 1, 2, 3]);
    expect(state.inFlight).toBe(0);
  });

  test("never exceeds the concurrency, starts in index order, returns results by index", async () => {
    const { state, start } = tracker((i) => (i % 3) * 5 + 1);
    const run = dispatch({ ...base, count: 20, concurrency: 4, arrivalsMs: null, start });
    expect(await run.done).toEqual([...Array(20).keys()].map((i) => i * 10));
    expect(state.maxInFlight).toBe(4);
    expect(state.started.map((s) => s.index)).toEqual([...Array(20).keys()]);
  });

  test("the intended time is the moment a slot was free: the first ones at the start, the rest as slots free up", async () => {
    const { state, start } = tracker(() => 10);
    const run = dispatch({ ...base, count: 6, concurrency: 2, arrivalsMs: null, start });
    await run.done;
    for (const s of state.started.slice(0, 2)) expect(s.intendedMs).toBe(run.startMs);
    for (const s of state.started.slice(2)) {
      expect(s.intendedMs).toBeGreaterThanOrEqual(run.startMs + 9);
      expect(s.atMs).toBeGreaterThanOrEqual(s.intendedMs);
    }
  });

  test("concurrency above count; onSettled hears every request once, with its result", async () => {
    const { state, start } = tracker(() => 5);
    const settled: string[] = [];
    const run = dispatch({ ...base, count: 3, concurrency: 100, arrivalsMs: null, start, onSettled: (i, r) => settled.push(`${i}:${r}`) });
    expect(await run.done).toEqual([0, 10, 20]);
    expect(state.maxInFlight).toBe(3);
    expect(settled.sort()).toEqual(["0:0", "1:10", "2:20"]);
  });

  test("zero requests resolve at once; a bad concurrency is refused", async () => {
    expect(await dispatch({ ...base, count: 0, concurrency: 3, arrivalsMs: null, start: async () => 1 }).done).toEqual([]);
    expect(() => dispatch({ ...base, count: 1, concurrency: 0, arrivalsMs: null, start: async () => 1 })).toThrow(RangeError);
  });
});

describe("dispatch, open loop (arrival times)", () => {
  test("nothing starts before it is due; each keeps its due time as the intended time", async () => {
    const offsets = [0, 5, 5, 12, 30, 31, 47];
    const { state, start } = tracker(() => 1);
    const run = dispatch({ ...base, count: offsets.length, concurrency: 10, arrivalsMs: offsets[Symbol.iterator](), start });
    await run.done;
    expect(state.started.map((s) => s.index)).toEqual([...offsets.keys()]);
    state.started.forEach((s, i) => {
      expect(s.intendedMs).toBe(run.startMs + offsets[i]!);
      expect(s.atMs).toBeGreaterThanOrEqual(s.intendedMs);
    });
  });

  test("due while every slot is busy: it waits in order, and the wait shows as start - intended", async () => {
    // One slot, 20 ms per request, one due every 5 ms: the backlog grows by 3 every 20 ms.
    const offsets = Array.from({ length: 6 }, (_, i) => i * 5);
    const { state, start } = tracker(() => 20);
    const run = dispatch({ ...base, count: 6, concurrency: 1, arrivalsMs: offsets[Symbol.iterator](), start });
    await run.done;
    expect(state.maxInFlight).toBe(1);
    const waits = state.started.map((s) => s.atMs - s.intendedMs);
    // Request k starts after k requests of 20 ms, but was due at 5k: it waited about 15k ms.
    for (const [k, w] of waits.entries()) expect(w).toBeGreaterThanOrEqual(15 * k - 1);
    expect(waits[5]!).toBeGreaterThan(70);
  });

  test("a request whose prompt is not ready waits for wake(), keeping its intended time", async () => {
    let ready = false;
    const { state, start } = tracker(() => 1);
    const opts: DispatchOptions<number> = { ...base, count: 2, concurrency: 2, arrivalsMs: [0, 0][Symbol.iterator](), start, isReady: (i) => i === 0 || ready };
    const run = dispatch(opts);
    await Bun.sleep(30);
    expect(state.started.map((s) => s.index)).toEqual([0]);
    ready = true;
    run.wake();
    await run.done;
    expect(state.started[1]!.intendedMs).toBe(run.startMs);
    expect(run.notReadyWaits).toBe(1);
    expect(state.started[1]!.atMs - state.started[1]!.intendedMs).toBeGreaterThanOrEqual(29);
  });

  test("pacing has no drift: 200 arrivals 2 ms apart end 400 ms after the start", async () => {
    const offsets = Array.from({ length: 200 }, (_, i) => (i + 1) * 2);
    const { state, start } = tracker(() => 0);
    const run = dispatch({ ...base, count: 200, concurrency: 50, arrivalsMs: offsets[Symbol.iterator](), start });
    await run.done;
    // However late single wake-ups were, the last send is not later than its own due time plus one wake-up.
    const last = state.started.at(-1)!;
    expect(last.intendedMs).toBe(run.startMs + 400);
    expect(last.atMs).toBeGreaterThanOrEqual(run.startMs + 400);
  });
});

describe("dispatch stops", () => {
  test("an abort starts nothing more, lets those in flight end, and ends a line that only waits for arrivals", async () => {
    const controller = new AbortController();
    const { state, start } = tracker(() => 20);
    const run = dispatch({ ...base, count: 5, concurrency: 5, arrivalsMs: [0, 10, 1000, 2000, 3000][Symbol.iterator](), start, signal: controller.signal });
    await Bun.sleep(15);
    controller.abort();
    const t = nowMs();
    const results = await run.done;
    // Over before the next arrival (at 1 s) was due.
    expect(nowMs() - t).toBeLessThan(900);
    expect(state.started.map((s) => s.index)).toEqual([0, 1]);
    expect(results.slice(2)).toEqual([undefined, undefined, undefined]);
    expect(results[1]).toBe(10);
  });

  test("stop() ends a line waiting for a prompt that never comes", async () => {
    const run = dispatch({ ...base, count: 3, concurrency: 1, arrivalsMs: null, isReady: () => false, start: async () => 1 });
    run.stop();
    expect(await run.done).toEqual([undefined, undefined, undefined]);
  });

  test("a task that rejects stops new starts; the error comes out once the others settled", async () => {
    const { state, start } = tracker(() => 10);
    const run = dispatch({
      ...base,
      count: 10,
      concurrency: 2,
      arrivalsMs: null,
      start: async (i, intendedMs) => {
        if (i === 1) throw new Error("boom");
        return start(i, intendedMs);
      },
    });
    await expect(run.done).rejects.toThrow("boom");
    // Request 0 was running when 1 failed: it finished before the rejection; nothing else started.
    expect(state.started.map((s) => s.index)).toEqual([0]);
    expect(state.inFlight).toBe(0);
  });

  test("closed loop: an abort starts nothing more, and those started finish", async () => {
    const { state, start } = tracker(() => 20);
    const controller = new AbortController();
    const run = dispatch({
      ...base,
      count: 10,
      concurrency: 2,
      arrivalsMs: null,
      signal: controller.signal,
      start: (i, intendedMs) => {
        if (i === 3) controller.abort();
        return start(i, intendedMs);
      },
    });
    const results = await run.done;
    expect(state.started.map((s) => s.index)).toEqual([0, 1, 2, 3]);
    expect(results.slice(0, 4)).toEqual([0, 10, 20, 30]);
    expect(results.slice(4)).toEqual(Array(6).fill(undefined));
  });

  test("an already aborted signal starts nothing", async () => {
    const { state, start } = tracker(() => 1);
    const run = dispatch({ ...base, count: 3, concurrency: 2, arrivalsMs: null, start, signal: AbortSignal.abort() });
    expect(await run.done).toEqual([undefined, undefined, undefined]);
    expect(state.started).toEqual([]);
  });
});

describe("dispatch, a due time past setTimeout's range (issue 37)", () => {
  test("a second arrival 1e15 ms away waits without Node's TimeoutOverflowWarning, and an interrupt ends it", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => {
      warnings.push(w.name);
    };
    process.on("warning", onWarning);
    try {
      const { state, start } = tracker(() => 1);
      const controller = new AbortController();
      const arrivals = [0, 1e15][Symbol.iterator]();
      const run = dispatch({ ...base, count: 2, concurrency: 2, arrivalsMs: arrivals, start, signal: controller.signal });
      await Bun.sleep(100);
      // The far one has not fired early (an overflowing timer fires after 1 ms).
      expect(state.started.map((s) => s.index)).toEqual([0]);
      controller.abort();
      expect(await run.done).toEqual([0, undefined]);
      await Bun.sleep(10);
      expect(warnings).toEqual([]);
    } finally {
      process.off("warning", onWarning);
    }
  });
});
