/**
 * Draws an agentic session's next prompts' blocks before they are due, so that a turn's send only joins views of
 * blocks already drawn (a 100k-token prompt's new blocks are about 10 ms of drawing, which on the clock would be
 * schedule lag). A turn's next calls in its tree (by ordinal: the chain's next turn, or a subagent's first) are
 * known from the trace as soon as it is sent; they are drawn in short slices between the event loop's other work.
 * Off the hot path: a block not drawn in time is drawn at the send, as before.
 */
import { promptChain, traceNamespace } from "../workload/agentic/prompt-chain.ts";
import type { AgenticCall, AgenticStep, AgenticTrace } from "../workload/agentic/session-tree.ts";
import type { BlockSource } from "./blocks.ts";

/** Work done before yielding to the event loop, ms. */
const SLICE_MS = 2;
/** Calls ahead of each sent one drawn. */
const AHEAD = 2;

/** Every call of a trace, depth first: the order the session plan gives their ordinals (session-plan.ts). */
export function callsOf(steps: readonly AgenticStep[]): AgenticCall[] {
  return steps.flatMap((s) => (s.kind === "call" ? [s] : callsOf(s.steps)));
}

export class BlockPrefetch {
  private readonly calls = new Map<AgenticTrace, AgenticCall[]>();
  /** Hash ids to draw, in order. */
  private queue: number[] = [];
  private scheduled = false;

  constructor(
    private readonly blocks: BlockSource,
    private readonly blockSize: number,
  ) {}

  private callsIn(trace: AgenticTrace): AgenticCall[] {
    let list = this.calls.get(trace);
    if (list === undefined) {
      list = callsOf(trace.steps);
      this.calls.set(trace, list);
    }
    return list;
  }

  /** The calls after `ordinal` in this instance of the trace (and `ordinal` itself when `including`). */
  ahead(trace: AgenticTrace, instance: number, clone: number, ordinal: number, including = false): void {
    const list = this.callsIn(trace);
    const ns = traceNamespace(trace, instance, clone);
    for (let k = including ? ordinal : ordinal + 1; k <= ordinal + AHEAD && k < list.length; k++) {
      this.queue.push(...promptChain(list[k]!, this.blockSize, ns, k).hashIds);
    }
    this.schedule();
  }

  /** Draws everything queued now (off the clock, before the schedule starts). */
  drain(): void {
    for (const h of this.queue) this.blocks.prepare(h);
    this.queue = [];
  }

  private schedule(): void {
    if (this.scheduled || this.queue.length === 0) return;
    this.scheduled = true;
    setTimeout(() => this.slice(), 0);
  }

  private slice(): void {
    this.scheduled = false;
    const until = performance.now() + SLICE_MS;
    let i = 0;
    for (; i < this.queue.length && (i === 0 || performance.now() < until); i++) this.blocks.prepare(this.queue[i]!);
    this.queue = this.queue.slice(i);
    this.schedule();
  }
}
