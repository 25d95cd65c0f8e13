/**
 * The main thread's side of the prompt worker: prompts arrive drawn and serialized, a bounded look-ahead before
 * they are needed, so memory follows what is in flight, not how many prompts a line sends. The look-ahead is
 * bounded twice: in prompts (RUN_DEFAULTS.promptLookahead) and in bytes not yet handed to a socket
 * (RUN_DEFAULTS.promptBufferBytes), which is what matters with 70k-token prompts.
 */
import { BenchError } from "../errors.ts";
import { RUN_DEFAULTS } from "../config/defaults.ts";
import type { FromWorker, ToWorker, WirePrompt } from "./prompt-protocol.ts";

/** A pct's shared part, as the worker drew it. */
export interface DrawnPrompts {
  prefixLen: number;
  suffixLen: number;
  /** The working set's prefixes (one without --working-set), and their digits. */
  prefixes: Uint32Array[];
  prefixDigits: Uint8Array[];
  /** promptIdsHash of the pct's prompts. */
  idsHash: string;
}

/** Which prompts a pass goes over: indices first, first + step, ... below count (a shard's share when step > 1). */
export interface PassRange {
  count: number;
  first: number;
  step: number;
}

/** One prompt of a pass, ready to become a request body. */
export interface FedPrompt {
  /** Its position in the pass. */
  index: number;
  /** The suffix's digits, in chunks to be joined by ",". */
  chunks: Uint8Array[];
  /** The suffix's first ids (as many as the pct asked for). */
  head: Uint32Array;
  bytes: number;
}

/**
 * Where the worker's code is. From source, beside this file. In the compiled binary (build.ts makes the worker an
 * entry point of its own) every module lives in one file at /$bunfs/root, so import.meta.url no longer points
 * here; there Bun resolves a relative specifier against the entry points' common root, src/.
 */
function workerSpecifier(): string {
  return import.meta.url.startsWith("file:///$bunfs/") ? "./workload/prompt-worker.ts" : new URL("./prompt-worker.ts", import.meta.url).href;
}

/** Serialized bytes per id, an upper estimate used before a prompt's real size is known (6-7 for 150k vocabularies). */
const BYTES_PER_ID_ESTIMATE = 7;

/** Limits of a pass's look-ahead. */
export interface LookaheadLimits {
  prompts: number;
  bytes: number;
}

const DEFAULT_LOOKAHEAD: LookaheadLimits = { prompts: RUN_DEFAULTS.promptLookahead, bytes: RUN_DEFAULTS.promptBufferBytes };

/** One pass over a pct's prompts (one line): positions 0..count-1, in order, each taken once. */
export class PromptPass {
  private readonly queue: FedPrompt[] = [];
  /** Index of queue[0]. */
  private head = 0;
  private granted = 0;
  private received = 0;
  /** Bytes received and not yet released (taken prompts are released once their body went out). */
  private outstandingBytes = 0;
  private listener: (() => void) | null = null;
  /** One-shot waiters of filled(). */
  private waiters: Array<() => void> = [];
  private closed = false;

  constructor(
    private readonly feed: PromptFeed,
    readonly id: number,
    readonly count: number,
    private readonly estimateBytes: number,
    private readonly limits: LookaheadLimits,
  ) {}

  /** Prompt `index` has arrived and can be taken (prompts are taken in order). */
  ready(index: number): boolean {
    return index === this.head && this.queue.length > 0;
  }

  /** Takes the next prompt; call `release` once its body is on the wire (or dropped). */
  take(): { prompt: FedPrompt; release: () => void } {
    const prompt = this.queue.shift();
    if (prompt === undefined) throw new Error(`prompt ${this.head} taken before it arrived`);
    this.head++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.outstandingBytes -= prompt.bytes;
      this.grant();
    };
    this.grant();
    return { prompt, release };
  }

  /** Called whenever a prompt arrives (or the worker failed: check `failure`). */
  onArrival(listener: () => void): void {
    this.listener = listener;
  }

  /** Why prompts stopped coming, if they did. */
  get failure(): Error | null {
    return this.feed.failure;
  }

  /** Resolves once the look-ahead is as full as its limits allow (or every prompt of the pass has arrived). */
  async filled(): Promise<void> {
    while (this.received < this.granted || this.canGrant()) {
      if (this.feed.failure) throw this.feed.failure;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue.length = 0;
    this.feed.send({ type: "close", pass: this.id });
  }

  /** Asks the worker for as many more prompts as the limits allow. */
  grant(): void {
    let more = 0;
    while (this.canGrant(more)) more++;
    if (more === 0) return;
    this.granted += more;
    this.feed.send({ type: "credit", pass: this.id, prompts: more });
  }

  private canGrant(extra = 0): boolean {
    if (this.closed || this.granted + extra >= this.count) return false;
    const ahead = this.granted + extra - this.head;
    // With nothing held at all, one prompt is made however large: a prompt beyond the byte limit must still be sent.
    if (ahead === 0 && this.outstandingBytes === 0) return true;
    const pendingBytes = (this.granted + extra - this.received) * this.estimateBytes;
    return ahead < this.limits.prompts && this.outstandingBytes + pendingBytes + this.estimateBytes <= this.limits.bytes;
  }

  /** From the feed: prompts `first`, `first + 1`, ... arrived. */
  deliver(first: number, prompts: WirePrompt[]): void {
    if (this.closed) return;
    prompts.forEach((p, k) => {
      this.queue.push({ index: first + k, chunks: p.chunks, head: p.head, bytes: p.bytes });
      this.outstandingBytes += p.bytes;
    });
    this.received += prompts.length;
    this.grant();
    this.notify();
  }

  /** From the feed: the worker failed. */
  fail(): void {
    this.notify();
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
    this.listener?.();
  }
}

/** The prompt worker of a run, and the pct it is drawing. */
export class PromptFeed {
  private readonly worker: Worker;
  private passes = new Map<number, PromptPass>();
  private nextPass = 1;
  private pending: { resolve: (p: DrawnPrompts) => void; reject: (e: Error) => void } | null = null;
  /** Where the current pct's dump lines go (--dump-prompts: the sink); null when none is asked for. */
  private dump: ((bytes: Uint8Array) => void) | null = null;
  private suffixLen = 0;
  failure: Error | null = null;

  /** Starts the worker with the run's id population and --seed. */
  constructor(population: Uint32Array, seed: bigint) {
    this.worker = new Worker(workerSpecifier());
    // The worker never keeps a finished run alive.
    this.worker.unref();
    this.worker.onmessage = (event: MessageEvent<FromWorker>) => this.receive(event.data);
    this.worker.onerror = (event) => this.fail(new BenchError(`the prompt worker failed: ${event.message}`));
    this.send({ type: "init", population, seed: seed.toString() });
  }

  /**
   * Draws a pct's prefix and moves the run's generator past `count` prompts, as the script draws them (and hands
   * their dump lines to `dump`, when set, in batches, every one before the promise resolves); every pass of the pct
   * then replays those prompts from the start.
   */
  startPct(p: {
    pct: number;
    totalTokens: number;
    workingSet: number;
    count: number;
    /** Which prefix each prompt shares where it is not index mod workingSet (the dump's lines name it); absent: the rotation. */
    groups?: Int32Array | null;
    headLen: number;
    dump: ((bytes: Uint8Array) => void) | null;
  }): Promise<DrawnPrompts> {
    for (const pass of this.passes.values()) pass.close();
    this.passes.clear();
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<DrawnPrompts>((resolve, reject) => {
      this.pending = { resolve, reject };
      this.dump = p.dump;
      this.send({
        type: "pct",
        pct: p.pct,
        totalTokens: p.totalTokens,
        workingSet: p.workingSet,
        count: p.count,
        groups: p.groups ?? null,
        headLen: p.headLen,
        dump: p.dump !== null,
      });
    });
  }

  /** A new pass over the current pct's first `count` prompts, or over a shard's share of them. */
  openPass(range: number | PassRange, limits: LookaheadLimits = DEFAULT_LOOKAHEAD): PromptPass {
    const { count, first, step } = typeof range === "number" ? { count: range, first: 0, step: 1 } : range;
    // The one place the share's length is worked out: the worker draws exactly these positions.
    const positions = first < count ? Math.ceil((count - first) / step) : 0;
    const id = this.nextPass++;
    const pass = new PromptPass(this, id, positions, Math.max(1, this.suffixLen) * BYTES_PER_ID_ESTIMATE, limits);
    this.passes.set(id, pass);
    this.send({ type: "pass", pass: id, positions, first, step });
    pass.grant();
    return pass;
  }

  send(msg: ToWorker): void {
    this.worker.postMessage(msg);
  }

  async close(): Promise<void> {
    this.worker.terminate();
  }

  private receive(msg: FromWorker): void {
    if (msg.type === "prompts") this.passes.get(msg.pass)?.deliver(msg.first, msg.prompts);
    else if (msg.type === "dump") this.dump?.(msg.bytes);
    else if (msg.type === "prefix") {
      this.suffixLen = msg.suffixLen;
      this.dump = null;
      const pending = this.pending;
      this.pending = null;
      pending?.resolve({ prefixLen: msg.prefixLen, suffixLen: msg.suffixLen, prefixes: msg.prefixes, prefixDigits: msg.prefixDigits, idsHash: msg.idsHash });
    } else this.fail(new BenchError(`the prompt worker failed: ${msg.message}`));
  }

  private fail(err: Error): void {
    this.failure ??= err;
    this.pending?.reject(err);
    this.pending = null;
    for (const pass of this.passes.values()) pass.fail();
  }
}
