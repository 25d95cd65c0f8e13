/**
 * One cell of the sweep (a pct, at one working-set size) as a sequence of named stages, each with typed inputs and
 * outputs:
 *
 *   plan -> prompts (the prefixes now, the rest just in time)
 *        -> per line (one per --request-rate, and per --repeat within it): reset the cache (the engine's flush,
 *           proof, settle) -> warm the prefixes (the engine's) -> measure -> summarize (one SweepLine) -> emit
 *           (to the sink; a line's last repeat with its gates judged on the mean)
 *
 * Every line of a cell gets its own flush and warm and sends the same prompts, so rates are compared on equal
 * terms: the same cache state, the same prompts, only the arrivals differ. This file only sequences the stages;
 * backends own their quirks, stages own their jobs. The state one line leaves for the next goes in and comes out.
 */
import type { SweepLine } from "../metrics/sweep-line.ts";
import { cacheSlotsOf, nextProbe, resetCache, type CacheReset } from "../engine/reset-cache.ts";
import type { WarmResult } from "../engine/warm.ts";
import type { SweepContext, SweepState } from "./context.ts";
import { repeatsOf, type SweepCell } from "./cells.ts";
import { planPct, repeatLine, type LinePlan, type CellPlan } from "./plan.ts";
import { gatesOnMean, repeatsDone } from "./repeats.ts";
import { buildPromptBatch, type PromptBatch } from "./stages/build-prompts.ts";
import { emitPct } from "./stages/emit.ts";
import { measureLine, type LineMeasurement } from "./stages/measure-line.ts";
import { summarizeMeasurement } from "./stages/summarize.ts";
import type { PointSummary } from "../engine/summarize.ts";
import { warmCell } from "./stages/warm-cell.ts";
import { checkLineFidelity } from "./stages/check-fidelity.ts";
import { lineDetails, lineExpectations, lineLedger, lineRouter, warmReplicas } from "./stages/replicas.ts";
import { resetReplicas } from "../engine/replica-set.ts";
import { ledgerKeys } from "../metrics/ledger-keys.ts";
import type { DetailLine } from "../engine/request-id.ts";

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
    // --repeat: the line again, innermost, each time from its own flush and warm; until enough (repeats.ts).
    const repeats: SweepLine[] = [];
    for (const repeat of repeatsOf(ctx.opts)) {
      if (records.length > 0 && ctx.io.signal?.aborted) return { records, complete: false, state };
      const line = repeatLine(rate, repeat);
      const done = await runLine(plan, line, batch, ctx, state);
      const record = done.summary.record;
      repeats.push(record);
      const last = repeat === null || record.interrupted || repeatsDone(repeats, ctx.opts);
      // A repeated line's gates judge its mean, once: in its last repeat's line (key table, `gates`).
      if (repeat !== null) record.gates = last ? gatesOnMean(ctx.opts.gates, repeats) : [];
      emitPct(done.summary, line, done.measurement, ctx, done.detailExtra);
      if (repeat !== null && last) ctx.io.sink.repeated(repeats);
      state = done.next(!(last && rate === plan.lines.at(-1)));
      records.push(record);
      if (record.interrupted) return { records, complete: false, state };
      if (last) break;
    }
  }
  return { records, complete: true, state };
}

/** A measured line, not yet emitted, and the state it leaves (whether the next line resends the cell's prompts). */
interface LineDone {
  summary: PointSummary;
  measurement: LineMeasurement;
  detailExtra?: DetailLine["extra"];
  next(nextLineResends: boolean): SweepState;
}

async function runLine(plan: CellPlan, line: LinePlan, batch: PromptBatch, ctx: SweepContext, state: SweepState): Promise<LineDone> {
  // The script's banner, once per line (per pct without a rate sweep), as `report` prints it from the file.
  ctx.io.sink.lineStarted({ shared_prefix_pct: plan.pct, prefix_len: plan.prefixLen, suffix_len: plan.suffixLen, working_set: plan.workingSet });
  // The worker starts drawing the line's prompts now, during the flush, the settle and the warm.
  const prompts = batch.openLine(line);
  let reset: CacheReset;
  let warm: WarmResult;
  let measurement: LineMeasurement;
  const replicas = ctx.replicas;
  const router = replicas === undefined ? undefined : lineRouter(plan, ctx, replicas);
  try {
    const resetInput = {
      probeIds: state.probeIds,
      canaryMaxTokens: ctx.opts.totalTokens,
      slots: cacheSlotsOf(ctx.server),
      prefixes: batch.prefixes,
      prefixLen: plan.prefixLen,
      learnTemplateHead: batch.text !== null,
      label: `${plan.pct}%`,
    };
    reset = replicas === undefined ? await resetCache(ctx, resetInput) : await resetReplicas(ctx, replicas, resetInput);
    warm = replicas === undefined ? await warmCell(plan, batch, ctx) : await warmReplicas(plan, batch, ctx, replicas, router!);
    measurement = await measureLine(plan, line, batch, prompts, router === undefined ? ctx : { ...ctx, router });
  } finally {
    prompts.close();
  }
  // What the flush's proof left cached (its probe), which the model counts against the capacity.
  const probeLen = reset.probeCachedTokens !== null && reset.probeIds !== null ? reset.probeIds.length : null;
  const ranges = lineExpectations(plan, measurement.records, ctx, probeLen, router);
  const ledger = replicas === undefined || router === undefined ? null : lineLedger(plan, measurement.records, router, ctx, replicas, probeLen);
  const replicaKeys =
    replicas === undefined || router === undefined || ledger === null
      ? null
      : ledgerKeys(
          ledger,
          router.policy,
          replicas.urls.map((url, r) => ({
            url,
            serverVersion: replicas.servers[r]!.info.version,
            cacheCapacityTokens: replicas.servers[r]!.info.cacheCapacityTokens,
          })),
        );
  // After the measurement (its figures are taken) and before the line is built: its keys and gates are the line's.
  const fidelity = measurement.interrupted ? null : await checkLineFidelity(plan, batch, ctx, state.linesWritten);
  const templateHeadTokens = reset.templateHeadTokens ?? state.templateHeadTokens;
  const summary = summarizeMeasurement({
    plan,
    line,
    batch,
    reset,
    warm,
    measurement,
    ctx,
    state: { ...state, templateHeadTokens },
    fidelity,
    replicaKeys,
    ranges,
  });
  return {
    summary,
    measurement,
    detailExtra: lineDetails(plan, ranges, ledger, router, replicas),
    next: (nextLineResends) => ({
      linesWritten: state.linesWritten + 1,
      ttftFit: summary.sweepFit,
      probeIds: nextProbe(reset.probeIds, measurement.lastFinishedProbeIds, nextLineResends, ctx.opts),
      templateHeadTokens,
    }),
  };
}
