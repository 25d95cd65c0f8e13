import { describe, expect, test } from "bun:test";
import { createInterrupt, deadlineSignal, isInterrupt, SAME_SIGNAL_MS, sleepUnlessInterrupted } from "../../src/interrupt.ts";

describe("the run's interrupt", () => {
  test("the first signal aborts and warns; a second one exits 130 at once; two copies of one Ctrl-C count once", async () => {
    const warned: string[] = [];
    const exits: number[] = [];
    const interrupt = createInterrupt({ warn: (m) => warned.push(m), exit: (c) => exits.push(c) });
    expect(interrupt.signal.aborted).toBe(false);
    interrupt.onSignal("SIGINT");
    expect(interrupt.signal.aborted).toBe(true);
    expect(warned).toEqual(["SIGINT: stopping; the current pct is summarized from the requests that completed (again to exit now)"]);
    expect(exits).toEqual([]);
    // The copy a relaunching parent passes on arrives with the terminal's own: the same signal.
    interrupt.onSignal("SIGINT");
    expect(exits).toEqual([]);
    await Bun.sleep(SAME_SIGNAL_MS + 20);
    interrupt.onSignal("SIGTERM");
    expect(exits).toEqual([130]);
    expect(warned).toHaveLength(1);
  });

  test("a sleep ends at once on the interrupt, as an exit-130 error naming what was interrupted", async () => {
    const controller = new AbortController();
    const t0 = performance.now();
    const sleeping = sleepUnlessInterrupted(60_000, controller.signal, "while settling");
    setTimeout(() => controller.abort(), 20);
    const err = await sleeping.catch((e: unknown) => e);
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(isInterrupt(err)).toBe(true);
    expect((err as Error).message).toBe("interrupted while settling");
    expect(isInterrupt(new Error("x"))).toBe(false);
    await sleepUnlessInterrupted(5, undefined, "x");
    await sleepUnlessInterrupted(5, new AbortController().signal, "x");
  });

  test("a deadline signal aborts on either the interrupt or the timeout", async () => {
    const controller = new AbortController();
    const a = deadlineSignal(controller.signal, 60_000);
    controller.abort();
    expect(a.aborted).toBe(true);
    const b = deadlineSignal(undefined, 10);
    await Bun.sleep(30);
    expect(b.aborted).toBe(true);
  });
});
