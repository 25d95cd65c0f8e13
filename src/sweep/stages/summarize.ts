/**
 * Stage: a line's records and everything around them -> the one typed SweepLine, by the engine's summarize
 * (src/engine/summarize.ts). What is the sweep's own is here: where the line sits, what its prompts should find
 * cached (token ids: the plan's paged prefix; text: a range per prompt) and how text prompts re-tokenized.
 */
import { summarizePoint, type Expectations, type PointSummary } from "../../engine/summarize.ts";
import type { PromptBatch } from "./build-prompts.ts";
import type { SweepContext, SweepState } from "../context.ts";
import type { LinePlan, CellPlan } from "../plan.ts";
import type { Measurement } from "../../engine/measure.ts";
import type { CacheReset } from "../../engine/reset-cache.ts";
import type { WarmResult } from "../../engine/warm.ts";
import type { PromptDrift } from "../../schema/nested.ts";
import type { StudyResult } from "../../engine/point-plan.ts";
import type { TextPrompts } from "../../workload/text-prompts.ts";
import type { RequestExpectation } from "../../metrics/point-expectations.ts";

/** Everything a line's record is made of. */
export interface MeasuredLine {
  plan: CellPlan;
  line: LinePlan;
  batch: PromptBatch;
  reset: CacheReset;
  warm: WarmResult;
  measurement: Measurement;
  ctx: SweepContext;
  /** The sweep so far (with the chat template's head as this line's reset left it). */
  state: SweepState;
  /** What the engine's studies found of the line (their keys go into it). */
  studies: readonly StudyResult[];
  /** Each request's expected cached range from the cache model; null where it does not apply (a cache per slot). */
  ranges: ReadonlyMap<number, RequestExpectation> | null;
}

export function summarizeMeasurement(input: MeasuredLine): PointSummary {
  const { plan, line, batch, reset, warm, measurement, ctx, state, studies, ranges } = input;
  const spec = {
    axes: { shared_prefix_pct: plan.pct, working_set: plan.workingSet, request_rate: line.rate, repeat: line.repeat ?? undefined, probe: ctx.probe },
    prefixLen: plan.prefixLen,
    suffixLen: plan.suffixLen,
    promptLen: plan.promptLen,
    numPrompts: line.count,
    workingSetTokens: plan.workingSetTokens,
    promptIdsHash: batch.idsHash,
    expected: expectations(plan, batch, ctx.server.pageSize, state.templateHeadTokens, ranges),
    // A text prompt's warm shares the chat template's head with the probe before it, so only the probe proves the flush.
    warmProvesFlush: reset.flushed && batch.text === null,
    promptDrift: batch.text === null ? null : promptDrift(plan, batch.text, state.templateHeadTokens),
    first: state.linesWritten === 0,
    ttftFitSoFar: state.ttftFit,
    studies,
    // Token ids: the model's ranges decide the pressure keys too (text prompts' ranges are the re-tokenization's).
    ranges: batch.text === null ? ranges : null,
  };
  return summarizePoint(spec, reset, warm, measurement, ctx);
}

/**
 * What every request should report cached: the plan's page-aligned prefix for token-id prompts. A text prompt
 * (chat) shares the chat template's head and the prefix as the server re-tokenizes it; where the prefix text ends
 * the boundary can move by a word, depending on what the slot held before, so each prompt allows a range: from the
 * prefix's stable tokens to all it shares, in whole pages. A paged cache reports the template head rounded down to
 * a page, so the head itself is known only to within a page, which widens the range by up to one page. `typical`
 * is the count most prompts should report with the head as observed (the JSONL's expected_cached_tokens).
 */
function expectations(plan: CellPlan, batch: PromptBatch, page: number, head: number, ranges: MeasuredLine["ranges"]): Expectations {
  const text = batch.text;
  if (text === null) {
    if (ranges === null) return { typical: plan.expectedCachedTokens, perPrompt: null };
    // Token ids: the model's range on the server that served it (a request it could not place is not judged).
    const perPrompt = (i: number): readonly [number, number] | null => {
      const x = ranges.get(i);
      return x === undefined ? null : [x.guaranteed, x.possible];
    };
    return { typical: plan.expectedCachedTokens, perPrompt };
  }
  const headHigh = head + page - 1;
  const pages = (tokens: number): number => Math.floor(tokens / page) * page;
  const low = pages(head + text.stableTokens);
  const perPrompt = (i: number): readonly [number, number] => [low, pages(headHigh + Math.max(text.sharedTokens[i] ?? 0, text.prefixTokens))];
  return { typical: pages(head + text.prefixTokens), perPrompt };
}

/** The JSONL's account of text prompts: how the prefix re-tokenized and what every prompt shares of it. */
function promptDrift(plan: CellPlan, text: TextPrompts, templateHeadTokens: number): PromptDrift {
  let min = Infinity;
  let max = 0;
  for (let position = 0; plan.indexAt(position) < plan.numPrompts; position++) {
    const shared = text.sharedTokens[plan.indexAt(position)] ?? 0;
    min = Math.min(min, shared);
    max = Math.max(max, shared);
  }
  return {
    prefix_ids: plan.prefixLen,
    prefix_tokens: text.prefixTokens,
    prefix_drift_at: text.prefixDriftAt,
    stable_tokens: text.stableTokens,
    min_shared_tokens: Number.isFinite(min) ? min : 0,
    max_shared_tokens: max,
    template_head_tokens: templateHeadTokens,
  };
}
