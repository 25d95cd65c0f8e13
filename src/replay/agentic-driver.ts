/**
 * Sends an agentic corpus as its session schedule says (src/workload/agentic/session-schedule.ts): each request at
 * its intended time, at most `maxConcurrency` in flight (0: no limit; a request that waits for a slot keeps its
 * intended time, so the wait shows as lag), and every answer's end fed back to the schedule - failures too, as AIPerf
 * releases a join on an error - which is what releases the turns and joins waiting on it. The schedule computes the
 * times from intended sends and reported ends only, so a late client never moves it. Warm-ups (--start-at's history)
 * go first, at the origin; the schedule times the rest of their trees from their ends. An interrupt stops new
 * requests; the ones in flight are cancelled (the request context's signal) and left out, as the engine's send does.
 */
import { nowMs } from "../client/clock.ts";
import { startClientMonitor, type ClientHealth } from "../metrics/self-check.ts";
import type { RequestRecord } from "../schema/record.ts";
import type { ScheduledRequest, SessionSchedule } from "../workload/agentic/session-schedule.ts";

export interface DriveOptions {
  /**
   * The schedule, its lanes starting at `originMs`. The driver asks for it at 0, on a clock of its own that starts
   * only once the schedule is built (its trees planned and started), so building it is nobody's lag.
   */
  scheduleAt(originMs: number): SessionSchedule;
  /** Sends one request (the record's index is its requestId); never rejects (streamRequest's contract). */
  send(request: ScheduledRequest): Promise<RequestRecord>;
  /** Requests in flight at once, at most; 0: no limit. */
  maxConcurrency: number;
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

/** Below this many ms to a due time the driver spins instead of sleeping: Bun's timers are whole milliseconds. */
const SPIN_MS = 1;

export function driveSessions(o: DriveOptions): Promise<DriveResult> {
  const monitor = startClientMonitor();
  const schedule = o.scheduleAt(0);
  // The schedule's times are from its origin, now; everything the driver hands out or reads back is on nowMs's clock.
  const originMs = nowMs();
  const requests = new Map<number, ScheduledRequest>();
  const records: RequestRecord[] = [];
  const waiting: ScheduledRequest[] = [];
  let inFlight = 0;
  let endMs = originMs;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let finished = false;
  let resolveDone: (r: DriveResult) => void = () => {};
  let rejectDone: (err: Error) => void = () => {};
  const done = new Promise<DriveResult>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });
  const aborted = () => o.signal?.aborted === true;
  const limit = o.maxConcurrency > 0 ? o.maxConcurrency : Number.POSITIVE_INFINITY;

  const finish = (): void => {
    if (finished) return;
    finished = true;
    if (timer !== null) clearTimeout(timer);
    resolveDone({ requests, records, originMs, endMs, interrupted: aborted(), health: monitor.stop() });
  };

  const start = (r: ScheduledRequest): void => {
    inFlight++;
    void o.send(r).then((rec) => {
      inFlight--;
      const at = nowMs();
      if (rec.failureKind !== "cancelled") {
        records.push(rec);
        endMs = Math.max(endMs, at);
        if (!aborted()) schedule.finished(r.requestId, at - originMs);
      }
      pump();
    });
  };

  const pump = (): void => {
    if (finished) return;
    if (aborted()) {
      waiting.length = 0;
      if (inFlight === 0) finish();
      return;
    }
    for (const r of schedule.next(nowMs() - originMs)) {
      r.intendedMs += originMs;
      requests.set(r.requestId, r);
      waiting.push(r);
    }
    while (waiting.length > 0 && inFlight < limit) start(waiting.shift()!);
    if (schedule.done() && waiting.length === 0 && inFlight === 0) {
      finish();
      return;
    }
    const dueIn = schedule.nextDueMs();
    if (dueIn === null) {
      // Nothing released and nothing in flight to release it: the schedule could never go on.
      if (inFlight === 0 && waiting.length === 0) {
        finished = true;
        rejectDone(new Error("agentic replay: the session schedule stalled (no request due, none in flight)"));
      }
      return;
    }
    if (timer !== null) clearTimeout(timer);
    const due = dueIn + originMs;
    const wait = due - nowMs();
    if (wait <= SPIN_MS) {
      // Short of a timer's resolution: spin to the due time, then hand it out.
      while (nowMs() < due) {
        // spin
      }
      timer = null;
      queueMicrotask(pump);
      return;
    }
    timer = setTimeout(
      () => {
        timer = null;
        pump();
      },
      // A due time past setTimeout's range (a trace stamp of 1e15 ms) wakes at the range's end and looks again.
      Math.min(2 ** 31 - 1, Math.floor(wait - SPIN_MS)),
    );
  };

  o.signal?.addEventListener("abort", () => pump(), { once: true });
  pump();
  return done;
}
