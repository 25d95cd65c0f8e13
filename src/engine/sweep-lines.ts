/**
 * A sweep line made by the engine (a sweep's line, a search's probe): the producer hands, as data, where the line
 * sits and what its prompts are; the engine makes the one typed SweepLine from the point (summarize.ts), judges it
 * (the run's gates, or a --repeat series' mean) and sends it and its requests' details to the sink. What a prompt
 * should find cached comes from the one cache model (token ids) or, for text prompts, from how their prefix
 * re-tokenized (a range per prompt).
 */
import { log } from "../log.ts";
import { delayedByMachine, describeSaturation } from "../metrics/self-check.ts";
import type { SweepLine } from "../metrics/sweep-line.ts";
import type { TtftMoments } from "../metrics/ttft-model.ts";
import type { PromptDrift } from "../schema/nested.ts";
import type { RequestRecord } from "../schema/record.ts";
import type { TextPrompts } from "../workload/text-prompts.ts";
import type { MeasuredPoint, PointLines } from "./point-plan.ts";
import type { RepeatSeries } from "./repeat-series.ts";
import type { DetailLine } from "./request-id.ts";
import type { SweepLineSink } from "./sink.ts";
import { summarizePoint, type Expectations, type PointSpec, type PointSummary, type SummaryContext } from "./summarize.ts";

/** A sweep line's text prompts: how their prefix re-tokenized, and the indices of the prompts this process sends. */
interface TextLine {
  prompts: TextPrompts;
  indices: readonly number[];
}

/** Everything the producer knows of a sweep line before it is sent: where it sits and what it sends (as summarize.ts' spec), and more. */
export interface SweepLineRecipe
  extends Pick<PointSpec, "axes" | "prefixLen" | "suffixLen" | "promptLen" | "numPrompts" | "workingSetTokens" | "promptIdsHash"> {
  /** What a token-id prompt finds cached (the plan's page-aligned prefix): the line's expected_cached_tokens. */
  expectedCachedTokens: number;
  /** Null: token-id prompts. */
  text: TextLine | null;
  /** What the lines before left: the chat template's head, whether this is the run's first line, the TTFT model's moments. */
  before: { templateHeadTokens: number; first: boolean; ttftFit: TtftMoments | null };
  summary: SummaryContext;
  sink: SweepLineSink;
  detail: Omit<DetailLine, "extra">;
  /** A --repeat series the line is one repeat of; null: judged on its own. */
  series: RepeatSeries | null;
}

/** The line's making, and what it leaves for the next line (the run's TTFT moments with this line's). */
export interface SweepLines {
  lines: PointLines<SweepLine>;
  ttftFit(): TtftMoments | null;
}

export function sweepLines(r: SweepLineRecipe): SweepLines {
  let summary: PointSummary | null = null;
  const emitLine = (record: SweepLine, point: MeasuredPoint, detailsOf: ((index: number) => Record<string, unknown>) | undefined): void => {
    const pct = record.shared_prefix_pct;
    logFailures(point.measurement.records);
    for (const problem of summary!.cache.problems) log.warn(`cache check (${pct}%): ${problem}`);
    const health = describeSaturation(point.measurement.health);
    if (record.client_saturated) log.warn(`${pct}%: ${health}`);
    else if (delayedByMachine(point.measurement.health)) log.info(`${pct}%: other load on this machine delayed the client's timers (${health})`);
    else log.debug(health);
    r.sink.details(r.summary.runId, { ...r.detail, extra: detailsOf }, point.measurement.records);
    r.sink.line(record);
  };
  const lines: PointLines<SweepLine> = {
    build: (point, studies) => {
      const head = point.reset.templateHeadTokens ?? r.before.templateHeadTokens;
      const text = r.text;
      const spec = {
        axes: r.axes,
        prefixLen: r.prefixLen,
        suffixLen: r.suffixLen,
        promptLen: r.promptLen,
        numPrompts: r.numPrompts,
        workingSetTokens: r.workingSetTokens,
        promptIdsHash: r.promptIdsHash,
        expected: expectations(r, r.summary.server.pageSize, head, point.ranges),
        // A text prompt's warm shares the chat template's head with the probe before it, so only the probe proves the flush.
        warmProvesFlush: point.reset.flushed && text === null,
        promptDrift: text === null ? null : promptDrift(r, text, head),
        first: r.before.first,
        ttftFitSoFar: r.before.ttftFit,
        studies,
        // Token ids: the model's ranges decide the pressure keys too (text prompts' ranges are the re-tokenization's).
        ranges: text === null ? point.ranges : null,
      };
      summary = summarizePoint(spec, point.reset, point.warm, point.measurement, r.summary);
      return [summary.record];
    },
    judge: r.series === null ? undefined : (line) => r.series!.judge(line),
    emit: (made, point, detailsOf) => {
      const record = made[0]!;
      if (r.series === null) emitLine(record, point, detailsOf);
      else r.series.hold(() => emitLine(record, point, detailsOf));
    },
  };
  return { lines, ttftFit: () => summary?.sweepFit ?? null };
}

/**
 * What every request should report cached: the model's range on the server that served it for token-id prompts
 * (a request it could not place is not judged; without the model, the plan's page-aligned prefix). A text prompt
 * (chat) shares the chat template's head and the prefix as the server re-tokenizes it; where the prefix text ends
 * the boundary can move by a word, depending on what the slot held before, so each prompt allows a range: from the
 * prefix's stable tokens to all it shares, in whole pages. A paged cache reports the template head rounded down to
 * a page, so the head itself is known only to within a page, which widens the range by up to one page. `typical`
 * is the count most prompts should report with the head as observed (the JSONL's expected_cached_tokens).
 */
function expectations(r: SweepLineRecipe, page: number, head: number, ranges: MeasuredPoint["ranges"]): Expectations {
  const text = r.text?.prompts;
  if (text === undefined) {
    if (ranges === null) return { typical: r.expectedCachedTokens, perPrompt: null };
    const perPrompt = (i: number): readonly [number, number] | null => {
      const x = ranges.get(i);
      return x === undefined ? null : [x.guaranteed, x.possible];
    };
    return { typical: r.expectedCachedTokens, perPrompt };
  }
  const headHigh = head + page - 1;
  const pages = (tokens: number): number => Math.floor(tokens / page) * page;
  const low = pages(head + text.stableTokens);
  const perPrompt = (i: number): readonly [number, number] => [low, pages(headHigh + Math.max(text.sharedTokens[i] ?? 0, text.prefixTokens))];
  return { typical: pages(head + text.prefixTokens), perPrompt };
}

/** The JSONL's account of text prompts: how the prefix re-tokenized and what every prompt shares of it. */
function promptDrift(r: SweepLineRecipe, text: TextLine, templateHeadTokens: number): PromptDrift {
  let min = Infinity;
  let max = 0;
  for (const index of text.indices) {
    const shared = text.prompts.sharedTokens[index] ?? 0;
    min = Math.min(min, shared);
    max = Math.max(max, shared);
  }
  return {
    prefix_ids: r.prefixLen,
    prefix_tokens: text.prompts.prefixTokens,
    prefix_drift_at: text.prompts.prefixDriftAt,
    stable_tokens: text.prompts.stableTokens,
    min_shared_tokens: Number.isFinite(min) ? min : 0,
    max_shared_tokens: max,
    template_head_tokens: templateHeadTokens,
  };
}

function logFailures(records: readonly RequestRecord[]): void {
  const failed = records.filter((r) => !r.ok);
  if (failed.length === 0) return;
  log.warn(`${failed.length}/${records.length} requests failed`);
  for (const r of failed.slice(0, 5)) log.warn(`  ${r.failureKind}: ${r.failureMessage.slice(0, 160)}`);
}
