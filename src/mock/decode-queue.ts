/**
 * The decode loop's clock: one timer for every decoding request. Requests wait in a binary min-heap by the
 * time their next event is due; one wake-up emits every event due by then, in due order, and re-arms the
 * timer for the earliest one left. Requests whose schedules coincide (started together) share one batch
 * step, as on a GPU, yet each keeps its own exact schedule (first token + n * itl), so lateness against it
 * measures only the mock's own delay. Thousands of streams cost one timer, not one timer per event.
 *
 * Bun's setTimeout has whole-millisecond resolution (it truncates the delay); re-arming for a sub-ms
 * remainder would make the event ~1 ms late, so a wake-up also emits what is due within that slack.
 */

/** Events due this close after a wake-up go out in it, ms (the timer's resolution). */
const TIMER_SLACK_MS = 1;

/** Something with a due time the queue orders by. */
export interface Due {
  /** performance.now() at which the next event is due. */
  dueMs: number;
}

/** Min-heap of due items driven by one timer; `fire` is called for each item once it is due. */
export class DecodeQueue<T extends Due> {
  private readonly heap: T[] = [];
  private readonly fire: (item: T) => void;
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** The due time the armed timer was set for (Infinity when none is armed). */
  private armedForMs = Infinity;
  /** True inside wake(): pushes then wait for the re-arm at its end. */
  private waking = false;
  private readonly onTimer = (): void => this.wake();

  /** `fire(item)` emits the item's event; it may push the item again with a later dueMs. */
  constructor(fire: (item: T) => void) {
    this.fire = fire;
  }

  /** Items waiting. */
  get size(): number {
    return this.heap.length;
  }

  /** Queue `item` at its dueMs; called from inside `fire` too (the item's next event). */
  push(item: T): void {
    const heap = this.heap;
    let i = heap.length;
    heap.push(item);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = heap[parent] as T;
      if (p.dueMs <= item.dueMs) break;
      heap[i] = p;
      i = parent;
    }
    heap[i] = item;
    if (item.dueMs < this.armedForMs && !this.waking) this.arm();
  }

  /** Forget every item and the timer (shutdown). Cancelled items are skipped by `fire`'s owner instead. */
  clear(): void {
    this.heap.length = 0;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.armedForMs = Infinity;
  }

  private wake(): void {
    this.timer = null;
    this.armedForMs = Infinity;
    this.waking = true;
    try {
      let horizonMs = performance.now() + TIMER_SLACK_MS;
      while (this.heap.length > 0) {
        const top = this.heap[0] as T;
        if (top.dueMs > horizonMs) {
          // Writing a batch takes time: events that fell due meanwhile go out in this wake-up too.
          horizonMs = performance.now() + TIMER_SLACK_MS;
          if (top.dueMs > horizonMs) break;
        }
        this.fire(this.pop());
      }
    } finally {
      this.waking = false;
      this.arm();
    }
  }

  private arm(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.armedForMs = Infinity;
    const top = this.heap[0];
    if (top === undefined) return;
    this.armedForMs = top.dueMs;
    // Bun truncates the delay to whole ms: rounding centres the wake-up on the due time instead of before it.
    this.timer = setTimeout(this.onTimer, Math.max(0, Math.round(top.dueMs - performance.now())));
  }

  private pop(): T {
    const heap = this.heap;
    const top = heap[0] as T;
    const last = heap.pop() as T;
    const n = heap.length;
    if (n === 0) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && (heap[right] as T).dueMs < (heap[left] as T).dueMs ? right : left;
      const c = heap[child] as T;
      if (c.dueMs >= last.dueMs) break;
      heap[i] = c;
      i = child;
    }
    heap[i] = last;
    return top;
  }
}
