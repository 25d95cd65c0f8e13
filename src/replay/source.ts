/**
 * The replay's requests as the engine's request source: bodies built just in time, a bounded look-ahead before
 * they are due (built in short slices off the clock, so a new 100k-token prompt never sits between another
 * stream's event and its timestamp), each given back to the wire as it goes. Memory is O(look-ahead + in flight)
 * whatever the trace's length: the blocks' digits are shared views (blocks.ts).
 */
import { bodyParts, type BodyTemplate } from "../backends/body.ts";
import type { RequestBody } from "../client/request-body.ts";
import type { BlockSource } from "./blocks.ts";
import type { TraceRequest } from "./trace.ts";

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
    const until = performance.now() + SLICE_MS;
    let added = false;
    try {
      while (this.next < this.requests.length && this.next < this.taken + this.lookahead && performance.now() < until) {
        this.built.set(this.next, this.build(this.next));
        this.next++;
        added = true;
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
