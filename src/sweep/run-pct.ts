/**
 * One cell of the sweep (a pct, at one working-set size): its plan and prompts (the prefixes now, the rest just in
 * time), then per line (one per --request-rate, and per --repeat within it) one point for the engine to run
 * (line-point.ts: reset -> warm -> measure -> model -> studies -> line -> gates -> sink, src/engine/run-point.ts), a
 * repeated line's gates judged on its mean in its last repeat.
 *
 * Every line of a cell gets its own flush and warm and sends the same prompts, so rates are compared on equal
 * terms: the same cache state, the same prompts, only the arrivals differ. The state one line leaves for the next
 * goes in and comes out.
 */
import type { SweepLine } from "../metrics/sweep-line.ts";
import { nextProbe } from "../engine/reset-cache.ts";
import { BenchError } from "../errors.ts";
import { outputStops } from "./output-stops.ts";
import type { SweepContext, SweepState } from "./context.ts";
import { repeatsOf, type SweepCell } from "./cells.ts";
import { linePoint } from "./line-point.ts";
import { planPct, repeatLine, type LinePlan, type CellPlan } from "./plan.ts";
import { RepeatSeries } from "../engine/repeat-series.ts";
import { buildPromptBatch, type PromptBatch } from "./stages/build-prompts.ts";
import { lastFinishedProbeIds } from "./stages/measure-line.ts";

export interface CellOutcome {
  records: SweepLine[];
  /** False when a line was interrupted (or the run was, before the next line). */
  complete: boolean;
  /** What the cell's last line left for the next cell. */
  state: SweepState;
}

/** Runs every line of one cell; stops after a line that was interrupted (or before the next, on an interrupt). */
export async function runPct(cell: SweepCell, ctx: SweepContext, state: SweepState): Promise<CellOutcome> {
  const plan = planPct(cell.pct, ctx.opts, ctx.server.pageSize, ctx.share, cell.workingSet);
  // The tokenizer is only needed to count output tokens after the run: build it now, off every clock.
  ctx.tokenizer.prepare();
  // Prompts come first (no server sees it): the reset needs the new prefixes to keep its probe clear of them.
  const batch = await buildPromptBatch(plan, ctx);
  const records: SweepLine[] = [];
  for (const rate of plan.lines) {
    // --repeat: the line again, innermost, each time from its own flush and warm; until enough (engine/repeats.ts).
    // A series is one verdict (its mean): the engine holds its lines until it ends (engine/repeat-series.ts).
    const series = ctx.opts.repeat === undefined ? null : new RepeatSeries(ctx.opts, ctx.io.sink);
    try {
      for (const repeat of repeatsOf(ctx.opts)) {
        if (records.length > 0 && ctx.io.signal?.aborted) return { records, complete: false, state };
        if (records.length > 0 && outputStops(ctx.opts)) return { records, complete: true, state };
        const done = await runLine(plan, repeatLine(rate, repeat), batch, ctx, state, series);
        const record = done.record;
        const last = series === null || series.settle();
        state = done.next(!(last && rate === plan.lines.at(-1)));
        records.push(record);
        if (record.interrupted) return { records, complete: false, state };
        if (last) break;
      }
    } finally {
      series?.abandon();
    }
  }
  return { records, complete: true, state };
}

/** A measured and emitted line, and the state it leaves (whether the next line resends the cell's prompts). */
interface LineDone {
  record: SweepLine;
  next(nextLineResends: boolean): SweepState;
}

async function runLine(
  plan: CellPlan,
  line: LinePlan,
  batch: PromptBatch,
  ctx: SweepContext,
  state: SweepState,
  series: RepeatSeries | null,
): Promise<LineDone> {
  // The worker starts drawing the line's prompts now, during the flush, the settle and the warm.
  const point = linePoint(plan, line, batch, batch.openLine(line), ctx, state, series);
  if (ctx.session === undefined) throw new BenchError("a sweep line runs in the session that prepared the run");
  const { lines, point: measured, lastFinished } = await ctx.session.runPoint(point.plan, { opts: ctx.opts, signal: ctx.io.signal });
  const templateHeadTokens = measured.reset.templateHeadTokens ?? state.templateHeadTokens;
  return {
    record: lines[0]!,
    next: (nextLineResends) => ({
      linesWritten: state.linesWritten + 1,
      ttftFit: point.ttftFit(),
      probeIds: nextProbe(measured.reset.probeIds, lastFinishedProbeIds(batch, lastFinished), nextLineResends, ctx.opts),
      templateHeadTokens,
    }),
  };
}
