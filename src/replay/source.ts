/**
 * The replay's requests as the engine's request source: bodies built just in time, a bounded look-ahead before
 * they are due (built in short slices off the clock, a prompt's new blocks drawn one at a time between looks at it,
 * so a new 100k-token prompt - about 10 ms of drawing - never sits between another stream's event and its
 * timestamp), each given back to the wire as it goes. Memory is O(look-ahead + in flight)
 * whatever the trace's length: the blocks' digits are shared views (blocks.ts).
 */
import { bodyParts, type BodyTemplate } from "../backends/body.ts";
import type { RequestBody } from "../client/request-body.ts";
import type { BlockSource } from "./blocks.ts";
import type { TraceRequest } from "../workload/trace.ts";

/** Bodies built ahead of need, at most. */
const LOOKAHEAD = 64;
/** Work done before yielding to the event loop, ms. */
const SLICE_MS = 2;
const NOTHING = new Uint8Array(0);

export interface SourcedTraceRequest {
  body: RequestBody;
  shape: { index: number; promptLen: number; maxNewTokens: number; requestId?: string };
}

export class TraceSource {
  private readonly built = new Map<number, SourcedTraceRequest>();
  private next = 0;
  /** Blocks of request `next` drawn so far (prepared in the block cache). */
  private drawn = 0;
  private taken = 0;
  private listeners: Array<() => void> = [];
  private pumping = false;
  private fill: { resolve: () => void; promise: Promise<void> };
  failure: Error | null = null;

  constructor(
    private readonly requests: readonly TraceRequest[],
    private readonly blocks: BlockSource,
    private readonly templateFor: (maxNewTokens: number) => BodyTemplate,
    private readonly requestIdOf: (index: number) => string | undefined,
    private readonly lookahead = LOOKAHEAD,
    private readonly sliceMs = SLICE_MS,
  ) {
    let resolve = () => {};
    const promise = new Promise<void>((r) => (resolve = r));
    this.fill = { resolve, promise };
    this.pump();
  }

  ready(position: number): boolean {
    return this.built.has(position);
  }

  take(position: number): SourcedTraceRequest {
    const got = this.built.get(position) ?? this.build(position);
    this.built.delete(position);
    this.taken = Math.max(this.taken, position + 1);
    this.schedule();
    return got;
  }

  onArrival(listener: () => void): void {
    this.listeners.push(listener);
  }

  filled(): Promise<void> {
    return this.fill.promise;
  }

  private build(position: number): SourcedTraceRequest {
    const r = this.requests[position]!;
    const body = bodyParts(this.templateFor(r.outputLength), NOTHING, this.blocks.promptDigits(r));
    return { body, shape: { index: r.index, promptLen: r.inputLength, maxNewTokens: r.outputLength, requestId: this.requestIdOf(r.index) } };
  }

  private schedule(): void {
    if (this.pumping) return;
    this.pumping = true;
    setTimeout(() => this.pump(), 0);
  }

  private pump(): void {
    this.pumping = false;
    const until = performance.now() + this.sliceMs;
    // At least one block per slice, however short: the pump always moves on.
    let first = true;
    const time = () => first || performance.now() < until;
    let added = false;
    // A body taken before the pump reached it was built on the spot: not again.
    if (this.next < this.taken) [this.next, this.drawn] = [this.taken, 0];
    try {
      while (this.next < this.requests.length && this.next < this.taken + this.lookahead && time()) {
        const ids = this.requests[this.next]!.hashIds;
        for (; this.drawn < ids.length && time(); this.drawn++, first = false) this.blocks.prepare(ids[this.drawn]!);
        if (this.drawn < ids.length) break;
        this.built.set(this.next, this.build(this.next));
        this.next++;
        this.drawn = 0;
        added = true;
        first = false;
      }
    } catch (err) {
      this.failure = err instanceof Error ? err : new Error(String(err));
    }
    const full = this.failure !== null || this.next >= Math.min(this.requests.length, this.taken + this.lookahead);
    if (full) this.fill.resolve();
    if (added || this.failure) for (const l of this.listeners) l();
    if (!full) this.schedule();
  }
}
