/**
 * Starts a line's requests: when they are due (open loop: a schedule of arrival times; closed loop: whenever a slot
 * is free), never more than `concurrency` in flight, in index order. A request that is due while every slot is busy,
 * or whose prompt is not ready yet, waits in a FIFO backlog; its intended time stays its due time, so that wait is
 * measured instead of hidden (coordinated omission). A closed loop also serves sources that pace themselves (a
 * conversation's next turn is ready once its answer is in and its think time passed): a slot waits for the next
 * ready request, and a source that ends early (conversations that ended) says so (`exhausted`), which ends the line
 * once the requests in flight have.
 *
 * Pacing: every due time is an offset from the line's start, so errors never accumulate; one timer at a time wakes
 * the dispatcher, which then starts everything due. Bun fires a timer after the whole milliseconds of its delay
 * (setTimeout(f, 2.9) runs after ~2.07 ms), so the dispatcher sleeps in whole milliseconds and waits out a last
 * fraction of a millisecond on the spot (at most `spinMs`, which bounds how long it can hold up other events);
 * a remainder longer than that costs one more 1 ms timer, sending up to 1 ms late rather than spinning.
 */
import { nowMs } from "./clock.ts";

/** The longest delay setTimeout takes (2^31 - 1 ms, about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface DispatchOptions<T> {
  /** Requests in the line. */
  count: number;
  /** Requests in flight at once, at most. */
  concurrency: number;
  /** Due times, ms from the start, in order (at least `count` of them); null: closed loop. */
  arrivalsMs: Iterator<number> | null;
  /** Longest busy-wait before a due time, ms. */
  spinMs: number;
  /** Whether request `index` can start now (its prompt is ready). */
  isReady(index: number): boolean;
  /** Starts request `index`; must not reject. */
  start(index: number, intendedMs: number): Promise<T>;
  /** Called as each request settles. */
  onSettled?(index: number, result: T): void;
  /** True once no request not yet started will ever be ready (a source that ends before `count`); absent: never. */
  exhausted?(): boolean;
  /** False: results are not kept (`done` resolves with none), for a source whose requests are read as they settle. */
  keepResults?: boolean;
  /** When it aborts nothing new starts; requests in flight run to their end (their own signal cancels them). */
  signal?: AbortSignal;
}

/** A running dispatch; resolves once every started request has settled. */
export interface Dispatch<T> {
  /** The results by index; indexes never started hold undefined. */
  done: Promise<(T | undefined)[]>;
  /** nowMs() of the start: due times are offsets from it. */
  startMs: number;
  /** Call when something it waits for may have changed (a prompt arrived). */
  wake(): void;
  /** Stops starting requests (those in flight run to their end), e.g. when prompts stopped coming. */
  stop(): void;
  /** Requests that were due, with a slot free, but not ready (their prompt had not arrived). */
  readonly notReadyWaits: number;
}

/** A FIFO of (index, intended time) that grows as needed: a saturated line can build a long backlog. */
class Backlog {
  private index = new Float64Array(64);
  private due = new Float64Array(64);
  private head = 0;
  private size = 0;

  get length(): number {
    return this.size;
  }

  push(index: number, dueMs: number): void {
    if (this.size === this.index.length) this.grow();
    const at = (this.head + this.size) % this.index.length;
    this.index[at] = index;
    this.due[at] = dueMs;
    this.size++;
  }

  peekIndex(): number {
    return this.index[this.head]!;
  }

  shift(): { index: number; dueMs: number } {
    const out = { index: this.index[this.head]!, dueMs: this.due[this.head]! };
    this.head = (this.head + 1) % this.index.length;
    this.size--;
    return out;
  }

  clear(): void {
    this.size = 0;
  }

  private grow(): void {
    const n = this.index.length;
    const index = new Float64Array(n * 2);
    const due = new Float64Array(n * 2);
    for (let k = 0; k < this.size; k++) {
      index[k] = this.index[(this.head + k) % n]!;
      due[k] = this.due[(this.head + k) % n]!;
    }
    this.index = index;
    this.due = due;
    this.head = 0;
  }
}

export function dispatch<T>(opts: DispatchOptions<T>): Dispatch<T> {
  const { count, concurrency } = opts;
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`dispatch: bad count ${count}`);
  if (!(concurrency >= 1)) throw new RangeError(`dispatch: bad concurrency ${concurrency}`);
  const keep = opts.keepResults !== false;
  const results = new Array<T | undefined>(keep ? count : 0).fill(undefined);
  const backlog = new Backlog();
  const t0 = nowMs();
  let scheduled = 0;
  let nextDueMs = Infinity;
  let inFlight = 0;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let timerFor = -1;
  let resolveDone: (r: (T | undefined)[]) => void = () => {};
  let rejectDone: (e: unknown) => void = () => {};
  let failure: { error: unknown } | null = null;
  let notReadyWaits = 0;
  let lastNotReady = -1;
  const done = new Promise<(T | undefined)[]>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });

  const takeNextArrival = (): void => {
    if (opts.arrivalsMs === null || scheduled >= count) {
      nextDueMs = Infinity;
      return;
    }
    const next = opts.arrivalsMs.next();
    nextDueMs = next.done ? Infinity : t0 + next.value;
  };

  const halted = (): boolean => stopped || opts.signal?.aborted === true;

  const finishIfDone = (): void => {
    const more = !halted() && (backlog.length > 0 || scheduled < count);
    if (inFlight > 0 || more) return;
    if (timer !== null) clearTimeout(timer);
    timer = null;
    opts.signal?.removeEventListener("abort", onAbort);
    if (failure) rejectDone(failure.error);
    else resolveDone(results);
  };

  const settle = (index: number, result: T): void => {
    if (keep) results[index] = result;
    inFlight--;
    opts.onSettled?.(index, result);
    // Closed loop: the freed slot is the next request's intended time.
    if (opts.arrivalsMs === null && scheduled < count && !halted()) backlog.push(scheduled++, nowMs());
    pump();
  };

  const startDue = (): void => {
    if (opts.exhausted?.() === true) {
      backlog.clear();
      scheduled = count;
      nextDueMs = Infinity;
      return;
    }
    while (backlog.length > 0 && inFlight < concurrency && !halted()) {
      if (!opts.isReady(backlog.peekIndex())) {
        if (lastNotReady !== backlog.peekIndex()) notReadyWaits++;
        lastNotReady = backlog.peekIndex();
        return;
      }
      const { index, dueMs } = backlog.shift();
      inFlight++;
      opts.start(index, dueMs).then(
        (result) => settle(index, result),
        (error: unknown) => {
          failure ??= { error };
          stopped = true;
          inFlight--;
          pump();
        },
      );
    }
  };

  function pump(): void {
    if (halted()) {
      backlog.clear();
      finishIfDone();
      return;
    }
    for (;;) {
      const now = nowMs();
      while (nextDueMs <= now) {
        backlog.push(scheduled++, nextDueMs);
        takeNextArrival();
      }
      startDue();
      const waitMs = nextDueMs - nowMs();
      // Close enough: wait on the spot rather than overshoot by a timer's whole millisecond.
      if (waitMs > 0 && waitMs <= opts.spinMs) {
        while (nowMs() < nextDueMs);
        continue;
      }
      break;
    }
    armTimer();
    finishIfDone();
  }

  function armTimer(): void {
    if (nextDueMs === Infinity) return;
    if (timer !== null && timerFor === scheduled) return;
    if (timer !== null) clearTimeout(timer);
    timerFor = scheduled;
    // Bun runs it after floor(delay) ms (at least 1): early by the fraction, which the next pump waits out or re-arms.
    timer = setTimeout(
      () => {
        timer = null;
        pump();
      },
      // A due time past setTimeout's range (a rate of 1e-9/s, a trace stamp of 1e15 ms) would fire at once with Node's
      // TimeoutOverflowWarning: the longest timer instead, re-armed by the pump until the time is due (or interrupted).
      Math.min(MAX_TIMER_MS, Math.max(0, nextDueMs - nowMs())),
    );
  }

  // An interrupt must end a line that is only waiting for its next arrival.
  const onAbort = (): void => pump();
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  if (opts.arrivalsMs === null) {
    while (scheduled < Math.min(count, concurrency)) backlog.push(scheduled++, t0);
  } else {
    takeNextArrival();
  }
  pump();
  return {
    done,
    startMs: t0,
    wake: () => pump(),
    stop: () => {
      stopped = true;
      pump();
    },
    get notReadyWaits() {
      return notReadyWaits;
    },
  };
}
