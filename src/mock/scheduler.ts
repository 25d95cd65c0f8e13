/**
 * The mock's latency model. Admission: as the cache policy allows (cache-policy.ts: at most maxRunning requests at
 * once with one shared cache, or one per free slot, llama.cpp's way), the rest wait in arrival order.
 * Prefill: ttftBaseMs + prefillUsPerToken per uncached prompt token + hostLoadUsPerToken per token loaded back
 * from the host tier, optionally one prefill at a time (serialPrefill, like one GPU). Decode: one token every
 * itlMs, reported one event per streamInterval tokens, driven for all requests by one decode queue
 * (decode-queue.ts) so the mock stays cheap at thousands of streams: no timer per event.
 *
 * The cache sees what SGLang's does (cache-policy.ts): the prompt after its prefill, and when a request finishes its
 * prompt plus every output token but the last - so a conversation's next turn finds its whole history cached (or
 * another legal behaviour the policy was built with: --insert-at, --inflight-pages, --no-output-cache).
 */
import type { CacheClaim, CachePolicy } from "./cache-policy.ts";
import { DecodeQueue } from "./decode-queue.ts";
import type { CacheHit } from "./tiered-cache.ts";

/** Latency knobs the scheduler reads (a subset of MockOptions). */
export interface LatencyModel {
  maxRunning: number;
  serialPrefill: boolean;
  ttftBaseMs: number;
  prefillUsPerToken: number;
  /** Cost of loading one cached token back from the host tier, µs. */
  hostLoadUsPerToken: number;
  itlMs: number;
  /** The generated ids (output.ts) depend on it, and finished requests cache them. */
  vocabSize: number;
}

/** One generation as the scheduler sees it; the callbacks write the response. */
export interface GenerationJob {
  inputIds: number[];
  /** Pin to this cache slot (llama.cpp's id_slot); null or absent: the server chooses. */
  idSlot?: number | null;
  /** llama.cpp's cache_prompt (default true): false reuses nothing of the cache. */
  cachePrompt?: boolean;
  maxNewTokens: number;
  /** Tokens per event after the first (SGLang's stream_interval). */
  streamInterval: number;
  /**
   * Recompute the whole prompt even where the cache holds it (--fault-forget-every): no cached tokens reported, every
   * prompt token paid for; the prompt is still inserted as usual.
   */
  forget?: boolean;
  /**
   * Prefill is about to run; `hit` is the prompt's prefix served from the cache tiers, `forgottenTokens` what the
   * cache held but a forget fault recomputed (0 otherwise).
   */
  onPrefillStart(hit: CacheHit, forgottenTokens: number): void;
  /** Tokens generated so far (cumulative); `done` on the last call. Called once with 0 when maxNewTokens is 0. */
  onTokens(completionTokens: number, done: boolean): void;
}

/** Handle on a submitted job. */
export interface JobTicket {
  /** Forget the job (client went away). */
  cancel(): void;
  /** Push every later event back by `ms` (a stalled server); call from onTokens to delay the next one. */
  delay(ms: number): void;
}

interface JobState {
  job: GenerationJob;
  phase: "queued" | "prefill-wait" | "prefill" | "decode" | "done";
  /** The prefill timer (decode events are timed by the decode queue). */
  timer: ReturnType<typeof setTimeout> | null;
  /** performance.now() when the first token was emitted. */
  firstTokenAtMs: number;
  /** Total stall added by delay(), ms. */
  delayMs: number;
  /** Cumulative tokens the next event reports, and when it is due (performance.now()). */
  nextTokens: number;
  dueMs: number;
  /** Where its cache lives while it runs; null until admitted. */
  claim: CacheClaim | null;
  /** Tokens generated so far (handed back to the cache policy at the end). */
  generated: number;
}

/** FIFO admission, prefill and decode timers for the mock server. */
export class MockScheduler {
  private readonly model: LatencyModel;
  private readonly cache: CachePolicy;
  private readonly waiting: JobState[] = [];
  private readonly prefillQueue: JobState[] = [];
  private prefillBusy = false;
  private runningCount = 0;
  private maxInSystem = 0;
  private readonly idleWaiters = new Set<() => void>();
  /** Every job not yet done, so shutdown can clear their timers. */
  private readonly live = new Set<JobState>();
  private readonly decode = new DecodeQueue<JobState>((state) => {
    // A cancelled job stays in the queue until it comes up; it is dropped here.
    if (state.phase === "decode") this.emit(state, state.nextTokens);
  });

  constructor(model: LatencyModel, cache: CachePolicy) {
    this.model = model;
    this.cache = cache;
  }

  /** Requests admitted (prefilling or decoding). */
  get running(): number {
    return this.runningCount;
  }

  /** Requests waiting for admission. */
  get queued(): number {
    return this.waiting.length;
  }

  /** Highest running + queued seen so far. */
  get maxObserved(): number {
    return this.maxInSystem;
  }

  /** True when nothing is running or queued (what flush_cache requires). */
  isIdle(): boolean {
    return this.runningCount === 0 && this.waiting.length === 0;
  }

  /** Resolve true once idle, or false after `timeoutMs`. */
  waitForIdle(timeoutMs: number): Promise<boolean> {
    if (this.isIdle()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const onIdle = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.idleWaiters.delete(onIdle);
        resolve(false);
      }, timeoutMs);
      this.idleWaiters.add(onIdle);
    });
  }

  /** Queue a job; it starts as soon as a running slot is free. */
  submit(job: GenerationJob): JobTicket {
    const state: JobState = {
      job,
      phase: "queued",
      timer: null,
      firstTokenAtMs: 0,
      delayMs: 0,
      nextTokens: 0,
      dueMs: 0,
      claim: null,
      generated: 0,
    };
    this.waiting.push(state);
    this.live.add(state);
    this.maxInSystem = Math.max(this.maxInSystem, this.runningCount + this.waiting.length);
    this.admit();
    return {
      cancel: () => this.cancel(state),
      delay: (ms) => {
        state.delayMs += ms;
      },
    };
  }

  /** Stop every timer and forget every job (server shutdown). */
  stopAll(): void {
    for (const state of this.live) {
      if (state.timer !== null) clearTimeout(state.timer);
      state.timer = null;
      state.phase = "done";
    }
    this.live.clear();
    this.decode.clear();
    this.waiting.length = 0;
    this.prefillQueue.length = 0;
    this.runningCount = 0;
    this.prefillBusy = false;
    for (const waiter of this.idleWaiters) waiter();
    this.idleWaiters.clear();
  }

  private cancel(state: JobState): void {
    if (state.phase === "done") return;
    if (state.timer !== null) clearTimeout(state.timer);
    state.timer = null;
    if (state.phase === "queued") {
      removeFrom(this.waiting, state);
      state.phase = "done";
      this.live.delete(state);
      this.notifyIfIdle();
      return;
    }
    if (state.phase === "prefill-wait") removeFrom(this.prefillQueue, state);
    if (state.phase === "prefill" && this.model.serialPrefill) this.prefillBusy = false;
    this.finish(state);
  }

  private admit(): void {
    // In arrival order; a request the policy cannot place yet (its pinned slot is busy) lets later ones pass.
    for (let i = 0; i < this.waiting.length && !this.cache.isFull(this.runningCount); ) {
      const state = this.waiting[i]!;
      const { inputIds, idSlot, cachePrompt } = state.job;
      const claim = this.cache.claim({ inputIds, idSlot: idSlot ?? null, cachePrompt: cachePrompt !== false }, this.runningCount);
      if (claim === null) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      state.claim = claim;
      this.runningCount++;
      if (this.model.serialPrefill) {
        state.phase = "prefill-wait";
        this.prefillQueue.push(state);
      } else {
        this.startPrefill(state);
      }
    }
    this.pumpPrefill();
  }

  private pumpPrefill(): void {
    if (!this.model.serialPrefill || this.prefillBusy) return;
    const next = this.prefillQueue.shift();
    if (next === undefined) return;
    this.prefillBusy = true;
    this.startPrefill(next);
  }

  /** The prefix match happens when prefill starts, as SGLang matches when it builds a prefill batch. */
  private startPrefill(state: JobState): void {
    state.phase = "prefill";
    const ids = state.job.inputIds;
    const matched = state.claim!.match();
    const forgotten = state.job.forget === true ? matched.tokens : 0;
    const hit = forgotten > 0 ? { ...matched, tokens: 0, deviceTokens: 0, hostTokens: 0 } : matched;
    state.job.onPrefillStart(hit, forgotten);
    const m = this.model;
    const prefillMs = m.ttftBaseMs + (m.prefillUsPerToken * (ids.length - hit.tokens) + m.hostLoadUsPerToken * hit.hostTokens) / 1000;
    state.timer = setTimeout(() => this.endPrefill(state), prefillMs);
  }

  private endPrefill(state: JobState): void {
    state.timer = null;
    state.claim!.insert();
    if (this.model.serialPrefill) {
      this.prefillBusy = false;
      this.pumpPrefill();
    }
    state.phase = "decode";
    state.firstTokenAtMs = performance.now();
    // SGLang sends the first token at once, then every stream_interval tokens (counts 1, 1+k, 1+2k, ..., N).
    this.emit(state, Math.min(1, state.job.maxNewTokens));
  }

  private emit(state: JobState, completionTokens: number): void {
    const done = completionTokens >= state.job.maxNewTokens;
    state.generated = completionTokens;
    state.job.onTokens(completionTokens, done);
    if (done) {
      this.finish(state);
      return;
    }
    if (state.phase === "done") return; // cancelled from inside onTokens
    const next = Math.min(completionTokens + state.job.streamInterval, state.job.maxNewTokens);
    state.nextTokens = next;
    // Targets are absolute (first token + (n-1) * itl) so timer lateness does not accumulate.
    state.dueMs = state.firstTokenAtMs + state.delayMs + (next - 1) * this.model.itlMs;
    this.decode.push(state);
  }

  /** Free the running slot once; later calls (a cancel racing the last event) do nothing. */
  private finish(state: JobState): void {
    if (state.phase === "done") return;
    state.phase = "done";
    this.live.delete(state);
    state.claim?.release(state.generated);
    this.runningCount--;
    this.admit();
    this.notifyIfIdle();
  }

  private notifyIfIdle(): void {
    if (!this.isIdle() || this.idleWaiters.size === 0) return;
    const waiters = [...this.idleWaiters];
    this.idleWaiters.clear();
    for (const waiter of waiters) waiter();
  }
}

function removeFrom<T>(list: T[], item: T): void {
  const index = list.indexOf(item);
  if (index >= 0) list.splice(index, 1);
}
