/**
 * One shared-prefix percentage as a sequence of named stages, each with typed inputs and outputs:
 *
 *   plan -> build prompts -> reset the cache (flush, prove, settle) -> warm the prefix -> measure
 *        -> summarize (one PctRecord) -> emit (console, JSONL, details)
 *
 * This file only sequences them; backends own their quirks, stages own their jobs.
 */
import { renderPctHeader } from "../report/console.ts";
import type { PctRecord } from "../metrics/pct-record.ts";
import type { SweepContext } from "./context.ts";
import { planPct } from "./plan.ts";
import { buildPromptBatch } from "./stages/build-prompts.ts";
import { emitPct } from "./stages/emit.ts";
import { measure } from "./stages/measure.ts";
import { rememberProbe, resetCache } from "./stages/reset-cache.ts";
import { summarizeMeasurement } from "./stages/summarize.ts";
import { warmPrefix } from "./stages/warm.ts";

export async function runPct(pct: number, ctx: SweepContext): Promise<PctRecord> {
  const plan = planPct(pct, ctx.opts, ctx.server.pageSize, ctx.share);
  ctx.io.out(renderPctHeader({ shared_prefix_pct: pct, prefix_len: plan.prefixLen, suffix_len: plan.suffixLen }));
  // The tokenizer is only needed to count output tokens after the run: build it now, off every clock.
  ctx.tokenizer.prepare();
  // Prompts come first (no server sees it): the reset needs the new prefix to keep its probe clear of it.
  const batch = buildPromptBatch(plan, ctx);
  const reset = await resetCache(plan, batch, ctx);
  const warm = await warmPrefix(plan, batch, ctx);
  const measurement = await measure(plan, batch, ctx);
  const summary = summarizeMeasurement(plan, batch, reset, warm, measurement, ctx);
  emitPct(summary, measurement, ctx);
  ctx.state.linesWritten++;
  ctx.state.ttftFit = summary.sweepFit;
  rememberProbe(measurement.records, batch, ctx);
  return summary.record;
}
