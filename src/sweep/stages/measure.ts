/**
 * Stage: one line's requests - in this process, or across the shards it coordinates - measured by the engine
 * (src/engine/measure.ts), and the probe the next flush needs: the first ids of the prompt this process saw finish last.
 */
import { measure as measurePoint, type Measurement as PointMeasurement } from "../../engine/measure.ts";
import type { SweepContext } from "../context.ts";
import type { LinePlan, PctPlan } from "../plan.ts";
import type { LinePrompts, PromptBatch } from "./build-prompts.ts";
import { lineSend } from "./measure-share.ts";

export interface Measurement extends PointMeasurement {
  /** The first ids of the prompt this process saw finish last (the next flush's probe); null when none succeeded. */
  lastFinishedProbeIds: Uint32Array | null;
}

/** Sends the line's `prompts` (opened by the caller, who closes them). */
export async function measure(plan: PctPlan, line: LinePlan, batch: PromptBatch, prompts: LinePrompts, ctx: SweepContext): Promise<Measurement> {
  const rate = Number.isFinite(line.rate) ? `${line.rate} req/s` : "as slots free up";
  const send = lineSend(plan, line, prompts, ctx);
  const { own: _own, ...m } = await measurePoint({
    ...send.options,
    ctx,
    shards: ctx.shards ? { group: ctx.shards, job: { pct: plan.pct, working_set: plan.workingSet, rate_index: line.rateIndex } } : null,
    announce: `Sending ${line.count} requests (${rate}, max_concurrency=${ctx.opts.maxConcurrency}) ...`,
  });
  // The coordinator's own prompts are the ones it can probe with: the last of its share to finish.
  const last = send.lastFinished();
  return { ...m, lastFinishedProbeIds: last === null ? null : batch.probeIds(last.index, last.suffixHead) };
}
