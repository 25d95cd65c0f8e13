/**
 * One interrupt for the whole run: SIGINT/SIGTERM abort a single AbortSignal that reaches every network call and
 * every wait (preflight, flush retries, settle, warm, measured requests), so a first Ctrl-C is felt at once.
 */
import { BenchError, EXIT } from "./errors.ts";

/** The error every interrupted step throws: exit 130, and what was being done. */
export function interruptedError(during: string): BenchError {
  return new BenchError(`interrupted ${during}`, EXIT.interrupted);
}

/** True when `err` is what an interrupt throws. */
export function isInterrupt(err: unknown): boolean {
  return err instanceof BenchError && err.exitCode === EXIT.interrupted;
}

/** A signal that aborts on the run's interrupt or after `timeoutMs`, whichever comes first. */
export function deadlineSignal(interrupt: AbortSignal | undefined, timeoutMs: number): AbortSignal {
  const timeout = AbortSignal.timeout(timeoutMs);
  return interrupt ? AbortSignal.any([interrupt, timeout]) : timeout;
}

/** Sleeps `ms`; an interrupt ends the sleep at once with interruptedError(during). */
export function sleepUnlessInterrupted(ms: number, interrupt: AbortSignal | undefined, during: string): Promise<void> {
  if (!interrupt) return Bun.sleep(ms);
  if (interrupt.aborted) return Promise.reject(interruptedError(during));
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(interruptedError(during));
    };
    const timer = setTimeout(() => {
      interrupt.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    interrupt.addEventListener("abort", onAbort, { once: true });
  });
}

/** The run's interrupt: the first signal aborts it, a second one exits at once (when the first cannot finish soon). */
export interface Interrupt {
  signal: AbortSignal;
  /** Call on SIGINT/SIGTERM. */
  onSignal(name: string): void;
}

/**
 * Two copies of one signal arrive this close together when a terminal's Ctrl-C reaches a process both directly and
 * through the parent that relaunched it (cli/relaunch.ts passes every signal on): they count as one.
 */
export const SAME_SIGNAL_MS = 250;

export function createInterrupt(hooks: { warn: (message: string) => void; exit: (code: number) => void }): Interrupt {
  const controller = new AbortController();
  let firstAtMs = 0;
  return {
    signal: controller.signal,
    onSignal(name: string) {
      if (controller.signal.aborted) {
        if (performance.now() - firstAtMs < SAME_SIGNAL_MS) return;
        hooks.exit(EXIT.interrupted);
        return;
      }
      firstAtMs = performance.now();
      hooks.warn(`${name}: stopping; the current pct is summarized from the requests that completed (again to exit now)`);
      controller.abort();
    },
  };
}

/**
 * `work` unless the run's interrupt comes first: then interruptedError(during) at once, and the work is left to
 * finish (or not) on its own. For waits on CPU-bound work elsewhere (a prompt worker drawing ten million ids, a
 * trace's blocks): the first signal must end the process within ~100 ms, not when the work is done.
 */
export function abortable<T>(work: Promise<T>, interrupt: AbortSignal | undefined, during: string): Promise<T> {
  if (!interrupt) return work;
  if (interrupt.aborted) return Promise.reject(interruptedError(during));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(interruptedError(during));
    interrupt.addEventListener("abort", onAbort, { once: true });
    work.then(
      (v) => {
        interrupt.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (err) => {
        interrupt.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}
