/**
 * One cell of the sweep (a pct, at one working-set size) as a sequence of named stages, each with typed inputs and
 * outputs:
 *
 *   plan -> prompts (the prefixes now, the rest just in time)
 *        -> per line (one per --request-rate): reset the cache (flush, prove, settle) -> warm the prefix -> measure
 *           -> summarize (one PctRecord) -> emit (console, JSONL, details)
 *
 * Every line of a cell gets its own flush and warm and sends the same prompts, so rates are compared on equal
 * terms: the same cache state, the same prompts, only the arrivals differ. This file only sequences the stages;
 * backends own their quirks, stages own their jobs.
 */
import { renderPctHeader } from "../report/console.ts";
import type { PctRecord } from "../metrics/pct-record.ts";
import type { SweepContext } from "./context.ts";
import type { SweepCell } from "./cells.ts";
import { planPct, type LinePlan, type PctPlan } from "./plan.ts";
import { buildPromptBatch, type PromptBatch } from "./stages/build-prompts.ts";
import { emitPct } from "./stages/emit.ts";
import { measure, type Measurement } from "./stages/measure.ts";
import { rememberProbe, resetCache, type CacheReset } from "./stages/reset-cache.ts";
import { summarizeMeasurement } from "./stages/summarize.ts";
import { warmPrefix, type WarmResult } from "./stages/warm.ts";

/** Runs every line of one cell; stops after a line that was interrupted (or before the next, on an interrupt). */
export async function runPct(cell: SweepCell, ctx: SweepContext): Promise<{ records: PctRecord[]; complete: boolean }> {
  const plan = planPct(cell.pct, ctx.opts, ctx.server.pageSize, ctx.share, cell.workingSet);
  // The tokenizer is only needed to count output tokens after the run: build it now, off every clock.
  ctx.tokenizer.prepare();
  // Prompts come first (no server sees it): the reset needs the new prefixes to keep its probe clear of them.
  const batch = await buildPromptBatch(plan, ctx);
  const records: PctRecord[] = [];
  for (const line of plan.lines) {
    if (records.length > 0 && ctx.io.signal?.aborted) return { records, complete: false };
    const record = await runLine(plan, line, batch, ctx);
    records.push(record);
    if (record.interrupted) return { records, complete: false };
  }
  return { records, complete: true };
}

async function runLine(plan: PctPlan, line: LinePlan, batch: PromptBatch, ctx: SweepContext): Promise<PctRecord> {
  // The script's banner, once per line (per pct without a rate sweep), as `report` prints it from the file.
  ctx.io.out(renderPctHeader({ shared_prefix_pct: plan.pct, prefix_len: plan.prefixLen, suffix_len: plan.suffixLen, working_set: plan.workingSet }));
  // The worker starts drawing the line's prompts now, during the flush, the settle and the warm.
  const prompts = batch.openLine(line);
  let reset: CacheReset;
  let warm: WarmResult;
  let measurement: Measurement;
  try {
    reset = await resetCache(plan, batch, ctx);
    warm = await warmPrefix(plan, batch, ctx);
    measurement = await measure(plan, line, batch, prompts, ctx);
  } finally {
    prompts.close();
  }
  const summary = summarizeMeasurement(plan, line, batch, reset, warm, measurement, ctx);
  emitPct(summary, line, measurement, ctx);
  ctx.state.linesWritten++;
  ctx.state.ttftFit = summary.sweepFit;
  rememberProbe(measurement.lastFinishedProbeIds, line !== plan.lines.at(-1), ctx);
  return summary.record;
}
