/** The decode queue: one timer, due order, batches of coinciding items, re-arming for an earlier item. */
import { expect, test } from "bun:test";
import { DecodeQueue } from "../../../src/mock/decode-queue.ts";

interface Item {
  name: string;
  dueMs: number;
  /** Further events: each fire pushes the item again `gapMs` later until none are left. */
  left: number;
  gapMs: number;
}

function harness(): { queue: DecodeQueue<Item>; fired: Array<{ name: string; lateMs: number; wake: number }>; wakes: () => number } {
  const fired: Array<{ name: string; lateMs: number; wake: number }> = [];
  let wake = 0;
  let lastFireMs = -Infinity;
  const queue = new DecodeQueue<Item>((item) => {
    const nowMs = performance.now();
    // Fires closer than 1 ms apart belong to one wake-up (one batch step).
    if (nowMs - lastFireMs > 1) wake++;
    lastFireMs = nowMs;
    fired.push({ name: item.name, lateMs: nowMs - item.dueMs, wake });
    if (item.left-- > 0) {
      item.dueMs += item.gapMs;
      queue.push(item);
    }
  });
  return { queue, fired, wakes: () => wake };
}

test("items fire in due order, at most the timer's 1 ms early, each on its own schedule", async () => {
  const { queue, fired } = harness();
  const t0 = performance.now();
  queue.push({ name: "c", dueMs: t0 + 60, left: 0, gapMs: 0 });
  queue.push({ name: "a", dueMs: t0 + 20, left: 2, gapMs: 25 }); // 20, 45, 70
  queue.push({ name: "b", dueMs: t0 + 30, left: 0, gapMs: 0 });
  await Bun.sleep(200);
  expect(fired.map((f) => f.name)).toEqual(["a", "b", "a", "c", "a"]);
  for (const f of fired) expect(f.lateMs).toBeGreaterThanOrEqual(-1.01);
  expect(queue.size).toBe(0);
});

test("an item pushed with an earlier due time re-arms the timer", async () => {
  const { queue, fired } = harness();
  const t0 = performance.now();
  queue.push({ name: "late", dueMs: t0 + 400, left: 0, gapMs: 0 });
  queue.push({ name: "soon", dueMs: t0 + 10, left: 0, gapMs: 0 });
  await Bun.sleep(150);
  expect(fired.map((f) => f.name)).toEqual(["soon"]);
  queue.clear();
  await Bun.sleep(300);
  expect(fired.map((f) => f.name)).toEqual(["soon"]); // clear() dropped "late" and its timer
});

test("500 items due together go out in one wake-up, and again together at every step", async () => {
  const { queue, fired, wakes } = harness();
  const dueMs = performance.now() + 20;
  for (let i = 0; i < 500; i++) queue.push({ name: `s${i}`, dueMs, left: 4, gapMs: 30 });
  await Bun.sleep(400);
  expect(fired.length).toBe(2500);
  // Five steps, one wake-up each (a noisy box may split a step; never into hundreds of timers).
  expect(wakes()).toBeGreaterThanOrEqual(5);
  expect(wakes()).toBeLessThanOrEqual(10);
});

test("an item due now or in the past (itl 0) fires all its events in one wake-up", async () => {
  const { queue, fired } = harness();
  queue.push({ name: "x", dueMs: performance.now() - 5, left: 9, gapMs: 0 });
  await Bun.sleep(30);
  expect(fired.length).toBe(10);
  expect(new Set(fired.map((f) => f.wake)).size).toBe(1);
});
