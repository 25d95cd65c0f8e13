/**
 * Which injected fault, if any, a request gets. Faults hit only "measured" requests (more than one
 * output token), never the one-token warm requests, so a sweep can still set up its cache. Measured
 * requests are numbered 1, 2, 3... in arrival order across /generate and /v1/completions; a fault
 * with "every N" hits request k when k % N == 0. The forget fault (--fault-forget-every) is numbered the same way but
 * picked apart from the others, and fires only on a request that would hit the cache.
 */
import type { MockOptions } from "./options.ts";

/** Faults that happen inside a started response, after 2 token events (see stream-driver.ts). */
export type StreamFault = "error-event" | "abort" | "reset" | "stall" | "malformed" | "invalid-utf8";

/** Every per-request fault: "fail" is a 503 before any stream. */
type RequestFault = "fail" | StreamFault;

/** The precedence when several "every N" match the same request: the first one wins. */
const FAULT_FLAGS: ReadonlyArray<[RequestFault, keyof MockOptions]> = [
  ["fail", "failEvery"],
  ["reset", "resetEvery"],
  ["error-event", "errorEventEvery"],
  ["abort", "abortEvery"],
  ["stall", "stallEvery"],
  ["malformed", "malformedEvery"],
  ["invalid-utf8", "invalidUtf8Every"],
];

/** A request's place among measured requests and the fault it gets. */
export interface FaultPick {
  /** 1-based ordinal among measured requests; 0 for a warm request. */
  ordinal: number;
  fault: RequestFault | null;
  /**
   * --fault-forget-every picked it: if it would hit the cache it recomputes its prompt and reports none cached. Apart
   * from the precedence above: it may come with any fault or none (it fires only once the prefix is matched).
   */
  forget: boolean;
}

/** Counts measured requests, picks their faults, and tallies what was injected. */
export class FaultPlan {
  private readonly opts: MockOptions;
  private measured = 0;
  private flushCalls = 0;
  private resetCalls = 0;
  /** Faults actually injected, by kind (a fault picked for a request that went away first is not). */
  readonly injected: Record<string, number> = {};

  constructor(opts: MockOptions) {
    this.opts = opts;
  }

  /** Number an accepted request and pick its fault; warm requests (maxNewTokens <= 1) get none. */
  pick(maxNewTokens: number): FaultPick {
    if (maxNewTokens <= 1) return { ordinal: 0, fault: null, forget: false };
    const ordinal = ++this.measured;
    const forgetEvery = this.opts.faultForgetEvery;
    const forget = forgetEvery > 0 && ordinal % forgetEvery === 0;
    for (const [fault, key] of FAULT_FLAGS) {
      const every = this.opts[key] as number;
      if (every > 0 && ordinal % every === 0) return { ordinal, fault, forget };
    }
    return { ordinal, fault: null, forget };
  }

  /** True when this measured request is the one after which the server dies (--exit-after). */
  isExitPoint(ordinal: number): boolean {
    return this.opts.exitAfter > 0 && ordinal === this.opts.exitAfter;
  }

  /** True when this /flush_cache call is among the first --flush-fail-first ones. */
  flushShouldFail(): boolean {
    return ++this.flushCalls <= this.opts.flushFailFirst;
  }

  /** True when this /reset_prefix_cache call is among the first --flush-fail-first ones. */
  resetShouldFail(): boolean {
    return ++this.resetCalls <= this.opts.flushFailFirst;
  }

  /** Count one injected fault of `kind`. */
  note(kind: string): void {
    this.injected[kind] = (this.injected[kind] ?? 0) + 1;
  }
}
