/**
 * A sweep line as the engine's point (src/engine/point-plan.ts): what its reset keeps clear of (the cell's
 * prefixes), how its prompts route over several replicas (by prefix group), what is warmed (the shared prefix alone,
 * with one output token: each prefix of the working set in turn, on each cache slot, pinned, for a server with one
 * cache per slot), its requests (measure-line.ts), how the cache model reads a prompt (its group's prefix, then a
 * suffix of its own), the samples --check-fidelity asks, and, as data, where its line sits (the engine makes,
 * judges and writes the line: src/engine/sweep-lines.ts). The engine runs it (src/engine/run-point.ts).
 */
import type { CacheSequence } from "../metrics/cache-model.ts";
import type { SweepLine } from "../metrics/sweep-line.ts";
import type { TtftMoments } from "../metrics/ttft-model.ts";
import type { FidelitySample } from "../engine/fidelity-check.ts";
import type { CacheView, PointPlan, RoutePlan, WarmPlan } from "../engine/point-plan.ts";
import type { RepeatSeries } from "../engine/repeat-series.ts";
import { sweepLines } from "../engine/sweep-lines.ts";
import { cacheSlotsOf } from "../engine/reset-cache.ts";
import { PyRandom } from "../workload/rng.ts";
import type { SweepContext, SweepState } from "./context.ts";
import type { CellPlan, LinePlan } from "./plan.ts";
import type { LinePrompts, PromptBatch } from "./stages/build-prompts.ts";
import { lineMeasureOptions, lineSend } from "./stages/measure-line.ts";

/** A line's point, and what it leaves for the next line once the engine has run it (the TTFT moments). */
export interface LinePoint {
  plan: PointPlan<SweepLine>;
  ttftFit(): TtftMoments | null;
}

/** Segment ids: a group's prefix, then a prompt's own suffix (ids never shared across prompts). */
const SHARED_BASE = 1;
const OWN_BASE = 2 ** 30;

/** Keeps the fidelity samples' stream apart from the measured prompts' (Python's random.Random(seed) for any int seed). */
const SAMPLE_SEED_OFFSET = 0x5eed_f1de;

export function linePoint(
  cell: CellPlan,
  line: LinePlan,
  batch: PromptBatch,
  prompts: LinePrompts,
  ctx: SweepContext,
  state: SweepState,
  /** The --repeat series the line is a repeat of; null: judged on its own. */
  series: RepeatSeries | null,
): LinePoint {
  const send = lineSend(cell, line, prompts, ctx);
  const made = sweepLines({
    axes: { shared_prefix_pct: cell.pct, working_set: cell.workingSet, request_rate: line.rate, repeat: line.repeat ?? undefined, probe: ctx.probe },
    prefixLen: cell.prefixLen,
    suffixLen: cell.suffixLen,
    promptLen: cell.promptLen,
    numPrompts: line.count,
    workingSetTokens: cell.workingSetTokens,
    promptIdsHash: batch.idsHash,
    expectedCachedTokens: cell.expectedCachedTokens,
    text: batch.text === null ? null : { prompts: batch.text, indices: ownIndices(cell) },
    before: { templateHeadTokens: state.templateHeadTokens, first: state.linesWritten === 0, ttftFit: state.ttftFit },
    summary: ctx,
    sink: ctx.io.sink,
    detail: { pct: cell.pct, rate: line.rate, requestIdTag: line.requestIdTag },
    series,
  });
  const plan: PointPlan<SweepLine> = {
    // The script's banner, once per line (per pct without a rate sweep), as `report` prints it from the file.
    started: () =>
      ctx.io.sink.lineStarted({ shared_prefix_pct: cell.pct, prefix_len: cell.prefixLen, suffix_len: cell.suffixLen, working_set: cell.workingSet }),
    reset: {
      probeIds: state.probeIds,
      canaryMaxTokens: ctx.opts.totalTokens,
      slots: cacheSlotsOf(ctx.server),
      prefixes: batch.prefixes,
      prefixLen: cell.prefixLen,
      learnTemplateHead: batch.text !== null,
      label: `${cell.pct}%`,
    },
    route: routeOf(cell, ctx),
    warm: warmOf(cell, batch),
    send: lineMeasureOptions(cell, line, send, ctx),
    sent: () => prompts.close(),
    cache: viewOf(cell, ctx),
    fidelity: ctx.opts.fidelity === undefined ? null : { samples: () => fidelitySamples(cell, batch, ctx, state.linesWritten), outputLen: ctx.opts.outputLen },
    lines: made.lines,
  };
  return { plan, ttftFit: made.ttftFit };
}

/** The indices of the prompts this process sends (all, or its shard's share), in its order. */
function ownIndices(cell: CellPlan): number[] {
  const out: number[] = [];
  for (let position = 0; cell.indexAt(position) < cell.numPrompts; position++) out.push(cell.indexAt(position));
  return out;
}

/** Whether the prompts of one prefix share at least a page of it (else routing on it means nothing). */
const sharesAPage = (cell: CellPlan, pageSize: number): boolean => cell.prefixLen >= pageSize;

/** Each group's first prompt (where a spreading route first sends it), found once per cell. */
function firstPrompts(cell: CellPlan): Map<number, number> {
  const first = new Map<number, number>();
  for (let i = cell.numPrompts - 1; i >= 0; i--) first.set(cell.groupOf(i), i);
  return first;
}

/** Prompts route by prefix group: its session and (where it shares a page) its prefix. */
function routeOf(cell: CellPlan, ctx: SweepContext): RoutePlan {
  const shared = sharesAPage(cell, ctx.server.pageSize);
  let first: Map<number, number> | null = null;
  return {
    keysOf: (index) => {
      const group = cell.groupOf(index);
      return { session: group, prefix: shared ? group : null };
    },
    prefixes: shared ? Array.from({ length: cell.workingSet }, (_, g) => g) : [],
    prefixTokens: cell.prefixLen,
    firstIndexOf: (g) => {
      first ??= firstPrompts(cell);
      return first.get(g) ?? g;
    },
    warmedEverywhere: ctx.opts.warmReplicas === "all",
    detailsOf: (index) => ({ prefix_group: cell.prefixLen === 0 ? null : cell.groupOf(index) }),
  };
}

/** Each prefix of the working set, alone with one output token (none when the prefix is empty). */
function warmOf(cell: CellPlan, batch: PromptBatch): WarmPlan | null {
  if (cell.prefixLen === 0 || batch.warmBody(0, null) === null) return null;
  return {
    groups: cell.workingSet,
    requestsOf: (groups, slots) => groups.flatMap((group) => slots.map((slot) => ({ body: batch.warmBody(group, slot)!, promptLen: cell.prefixLen }))),
    announce: (groups, slots, url) => {
      const which = groups > 1 ? `${groups} prefixes of ` : "";
      const where = slots > 1 ? ` on each of the server's ${slots} slots` : "";
      return `Warming shared prefix only (${which}${cell.prefixLen} tokens)${where}${url === null ? "" : ` on ${url}`} ...`;
    },
    say: {
      during: "during the warm request",
      failed: (why) => `Warmup failed - Please make sure benchmark arguments are correctly specified. Error: ${why}`,
    },
  };
}

/** A sweep prompt as the model reads it: its group's prefix (where it has one), then a suffix of its own. */
function viewOf(cell: CellPlan, ctx: SweepContext): CacheView {
  const shared = sharesAPage(cell, ctx.server.pageSize);
  return {
    sequenceOf: (index): CacheSequence =>
      cell.prefixLen === 0
        ? { hashIds: [OWN_BASE + index], ends: [cell.promptLen], length: cell.promptLen }
        : { hashIds: [SHARED_BASE + cell.groupOf(index), OWN_BASE + index], ends: [cell.prefixLen, cell.promptLen], length: cell.promptLen },
    warmedSequenceOf: (group) => ({ hashIds: [SHARED_BASE + group], ends: [cell.prefixLen], length: cell.prefixLen }),
    // The flush's proof left a probe sharing nothing with any prompt (before the warm).
    probeSequenceOf: (length) => ({ hashIds: [OWN_BASE - 1], ends: [length], length }),
    homeKeyOf: (index) => (shared ? cell.groupOf(index) : null),
    blockSize: ctx.server.pageSize,
  };
}

/**
 * --check-fidelity's samples, shaped as the line's prompts: each shares one of the working set's prefixes (in turn)
 * and has a suffix of its own, drawn from a stream seeded apart from the measured prompts' (seed + line), so the
 * measured prompts, their draw order and the line's figures are exactly those of a run without the check.
 */
function fidelitySamples(cell: CellPlan, batch: PromptBatch, ctx: SweepContext, lineIndex: number): FidelitySample[] {
  const rng = new PyRandom(ctx.opts.seed + BigInt(SAMPLE_SEED_OFFSET + lineIndex));
  const samples: FidelitySample[] = [];
  for (let i = 0; i < ctx.opts.fidelity!.sample; i++) {
    const prefix = batch.prefixes[cell.groupOf(i)] ?? new Uint32Array(0);
    const ids = new Uint32Array(prefix.length + cell.suffixLen);
    ids.set(prefix, 0);
    rng.choicesInto(ctx.tokenizer.population, ids, prefix.length, cell.suffixLen);
    samples.push({ ids: [...ids], prefixLen: prefix.length });
  }
  return samples;
}
