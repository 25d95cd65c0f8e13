/**
 * A --repeat series as the engine runs it: each repeat's line judged as it is built (no gate until the series ends,
 * then every gate on the mean, engine/repeats.ts), each repeat's emit held until the series ends, so that a series
 * reaches the sink whole, as one verdict. A series the run did not finish (an interrupt, an error) is written with
 * every line it measured marked interrupted.
 */
import type { SweepLine } from "../metrics/sweep-line.ts";
import type { GateResult } from "../schema/nested.ts";
import { gatesOnMean, repeatsDone, type RepeatRules } from "./repeats.ts";
import type { SweepLineSink } from "./sink.ts";

export class RepeatSeries {
  private readonly lines: SweepLine[] = [];
  private readonly held: Array<() => void> = [];
  private ended = false;
  /** Whether the repeat judged last ended the series (--repeat times, the CV reached, or interrupted). */
  private last = false;

  constructor(
    private readonly rules: RepeatRules,
    private readonly sink: Pick<SweepLineSink, "repeated">,
  ) {}

  judge(line: SweepLine): GateResult[] {
    this.lines.push(line);
    this.last = line.interrupted || repeatsDone(this.lines, this.rules);
    return this.last ? gatesOnMean(this.rules.gates, this.lines) : [];
  }

  hold(emit: () => void): void {
    this.held.push(emit);
  }

  /** After a repeat ran: whether the series ended, and if so, every line of it reaches the sink now. */
  settle(): boolean {
    if (!this.last) return false;
    // An interrupted repeat ends the series unfinished: every line of it says so.
    if (this.lines.at(-1)?.interrupted === true) this.markUnfinished();
    this.ended = true;
    this.release();
    this.sink.repeated(this.lines);
    return true;
  }

  /** On leaving a series early (an interrupt before the next repeat, an error): what it measured, marked unfinished. */
  abandon(): void {
    if (this.ended || this.held.length === 0) return;
    this.markUnfinished();
    this.release();
  }

  private release(): void {
    for (const emit of this.held.splice(0)) emit();
  }

  private markUnfinished(): void {
    for (const r of this.lines) {
      r.interrupted = true;
      if (r.evidence !== undefined) r.evidence.complete = false;
    }
  }
}
