/**
 * An agentic corpus as one request source (engine/send.ts' RequestSource), sent by the engine's send and dispatcher
 * as its session schedule says (src/workload/agentic/session-schedule.ts): each request at its intended time, at
 * most `maxConcurrency` in flight (0: no limit; a request that waits for a slot keeps its intended time, so the wait
 * shows as lag), and every answer's end fed back to the schedule - failures too, as AIPerf releases a join on an
 * error - which is what releases the turns and joins waiting on it. The schedule computes the times from intended
 * sends and reported ends only, so a late client never moves it. Warm-ups (--start-at's history) go first, at the
 * origin; the schedule times the rest of their trees from their ends. An interrupt stops new requests; the ones in
 * flight are cancelled (the send's signal) and left out, as the engine's send does.
 */
import { nowMs } from "../client/clock.ts";
import type { RequestSource, SelfPacedSend, SourcedRequest } from "../engine/send.ts";
import type { ClientHealth } from "../metrics/self-check.ts";
import type { RequestRecord } from "../schema/record.ts";
import type { ScheduledRequest, SessionSchedule } from "../workload/agentic/session-schedule.ts";

export interface DriveOptions {
  /**
   * The schedule, its lanes starting at `originMs`. The driver asks for it at 0, on a clock of its own that starts
   * only once the schedule is built (its trees planned and started), so building it is nobody's lag.
   */
  scheduleAt(originMs: number): SessionSchedule;
  /** One request as the engine sends it (the record's index is its requestId), built as it goes out. */
  build(request: ScheduledRequest): SourcedRequest;
  /** The most requests the schedule can hand out (every call of every tree): the send's count, and its slots with no limit. */
  maxRequests: number;
  /** Requests in flight at once, at most; 0: no limit. */
  maxConcurrency: number;
  send: SelfPacedSend;
  signal?: AbortSignal;
}

export interface DriveResult {
  /** Every request handed out, by requestId. */
  requests: Map<number, ScheduledRequest>;
  /** Every request that ran to an end (warm-ups included), in end order. */
  records: RequestRecord[];
  /** The schedule's origin and the last end, nowMs clock. */
  originMs: number;
  endMs: number;
  interrupted: boolean;
  health: ClientHealth;
}

/** Below this many ms to a due time the source spins instead of sleeping: Bun's timers are whole milliseconds. */
const SPIN_MS = 1;

const FILLED = Promise.resolve();

export async function driveSessions(o: DriveOptions): Promise<DriveResult> {
  const source = new SessionSource(o);
  const health = await o.send(source, o.maxRequests, o.maxConcurrency > 0 ? o.maxConcurrency : Math.max(1, o.maxRequests), (_, rec) => source.ended(rec));
  source.close();
  return {
    requests: source.requests,
    records: source.records,
    originMs: source.originMs,
    endMs: source.endMs,
    interrupted: o.signal?.aborted === true,
    health,
  };
}

class SessionSource implements RequestSource {
  readonly pacesItself = true;
  failure: Error | null = null;
  readonly requests = new Map<number, ScheduledRequest>();
  readonly records: RequestRecord[] = [];
  readonly originMs: number;
  endMs: number;
  private readonly schedule: SessionSchedule;
  /** Released requests, due by now, in intended order, not yet taken. */
  private readonly waiting: ScheduledRequest[] = [];
  private inFlight = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly listeners: (() => void)[] = [];
  private readonly onAbort = (): void => this.notify();

  constructor(private readonly o: DriveOptions) {
    this.schedule = o.scheduleAt(0);
    // The schedule's times are from its origin, now; everything the source hands out or reads back is on nowMs's clock.
    this.originMs = nowMs();
    this.endMs = this.originMs;
    o.signal?.addEventListener("abort", this.onAbort, { once: true });
    this.release();
  }

  ready(): boolean {
    return this.waiting.length > 0 && this.o.signal?.aborted !== true;
  }

  take(): SourcedRequest {
    const r = this.waiting.shift()!;
    this.inFlight++;
    return { ...this.o.build(r), scheduledMs: r.intendedMs };
  }

  onArrival(listener: () => void): void {
    this.listeners.push(listener);
  }

  filled(): Promise<void> {
    return FILLED;
  }

  exhausted(): boolean {
    return this.o.signal?.aborted === true || (this.schedule.done() && this.waiting.length === 0);
  }

  /** A request ended: fed back to the schedule, which may release more (the dispatcher pumps after each settle). */
  ended(rec: RequestRecord): void {
    this.inFlight--;
    const at = nowMs();
    if (rec.failureKind !== "cancelled") {
      this.records.push(rec);
      this.endMs = Math.max(this.endMs, at);
      if (this.o.signal?.aborted !== true) this.schedule.finished(rec.index, at - this.originMs);
    }
    this.release();
  }

  close(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.o.signal?.removeEventListener("abort", this.onAbort);
  }

  private notify(): void {
    for (const listener of this.listeners) listener();
  }

  /** Moves what is due into `waiting` and arms a timer (or spins) for the next due time. */
  private release(): void {
    if (this.o.signal?.aborted === true || this.failure !== null) return;
    for (const r of this.schedule.next(nowMs() - this.originMs)) {
      r.intendedMs += this.originMs;
      this.requests.set(r.requestId, r);
      this.waiting.push(r);
    }
    const dueIn = this.schedule.nextDueMs();
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (dueIn === null) {
      // Nothing released and nothing in flight to release it: the schedule could never go on.
      if (this.inFlight === 0 && this.waiting.length === 0 && !this.schedule.done()) {
        this.failure = new Error("agentic replay: the session schedule stalled (no request due, none in flight)");
        queueMicrotask(() => this.notify());
      }
      return;
    }
    const due = dueIn + this.originMs;
    const wait = due - nowMs();
    if (wait <= SPIN_MS) {
      // Short of a timer's resolution: spin to the due time, then hand it out.
      while (nowMs() < due) {
        // spin
      }
      queueMicrotask(() => {
        this.release();
        this.notify();
      });
      return;
    }
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.release();
        this.notify();
      },
      // A due time past setTimeout's range (a trace stamp of 1e15 ms) wakes at the range's end and looks again.
      Math.min(2 ** 31 - 1, Math.floor(wait - SPIN_MS)),
    );
  }
}
