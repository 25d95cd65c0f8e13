/**
 * The numbers of one pct and of its lines, fixed before anything is sent: the script's prefix/suffix split, what the
 * cache should hold, and per request rate (one line each) how many requests go out and how many at once - in the
 * whole run and in this process's share of it.
 */
import { shuffledGroups } from "../workload/prefix-groups.ts";
import { inFlightLimit, type RunOptions } from "../config/options.ts";
import { arrivalCount } from "../workload/arrivals.ts";
import { splitPrompt } from "../workload/prompts.ts";
import { expectedCached, shareOf, type ShardShare } from "../engine/plan.ts";

/** One line of a pct: one request rate. */
export interface LinePlan {
  /** Requests per second; Infinity = closed loop. */
  rate: number;
  /** Position in --request-rate (request ids tell the rates of one pct apart). */
  rateIndex: number;
  /** Requests the line sends, over every shard: --num-prompts, or with --duration those due before it ends. */
  count: number;
  /** Requests this process sends: all of them, or its shard's share (prompts rank, rank + size, ... below count). */
  sends: number;
  /** Requests in flight at once in this process (--max-concurrency, or every request when it is 0; a shard's share). */
  inFlight: number;
  /**
   * What tells this line's request ids apart from every other line's in the run: the pct, then the working set and
   * the rate when the run sweeps several (`50`, `50w4`, `50@200`): sent as x-request-id and written in the details.
   */
  requestIdTag: string;
  /** Which measurement of the line this is (--repeat: 0..N-1); null without --repeat. */
  repeat: number | null;
}

export interface CellPlan {
  pct: number;
  /** total_tokens*pct//100, as the script. */
  prefixLen: number;
  suffixLen: number;
  /** Every measured prompt's length, tokens. */
  promptLen: number;
  /** The pct's prompts, as the script draws them: the most any of its lines sends (every line resends the same ones). */
  numPrompts: number;
  lines: LinePlan[];
  /** This process's share of a sharded run; null when it sends every prompt. */
  share: ShardShare | null;
  /** The prompt index this process sends at `position` of a line (position k of its share). */
  indexAt(position: number): number;
  /** Cached tokens every measured request should report: the prefix in whole pages. */
  expectedCachedTokens: number;
  /** Distinct prefixes in rotation (--working-set). */
  workingSet: number;
  /** Which prefix prompt `index` shares: index mod K, or (routed over replicas) a seeded random order. */
  groupOf(index: number): number;
  /** That order where it is not the rotation (the prompt worker's dump needs it); null: index mod K. */
  groups: Int32Array | null;
  /** workingSet x prefixLen: what the cache must hold for every expected hit. */
  workingSetTokens: number;
}

/** Measurement `repeat` of a line (--repeat): the same requests under request ids of its own (`50r1`, `50@200r1`). */
export const repeatLine = (line: LinePlan, repeat: number | null): LinePlan =>
  repeat === null ? line : { ...line, repeat, requestIdTag: `${line.requestIdTag}r${repeat}` };

/** Requests one line sends at `rate`: --num-prompts, or the arrivals due within --duration. */
function requestsPerLine(opts: Pick<RunOptions, "numPrompts" | "durationS" | "burstiness" | "seed">, rate: number): number {
  if (opts.durationS === null || !Number.isFinite(rate)) return opts.numPrompts;
  return arrivalCount({ ratePerS: rate, burstiness: opts.burstiness, seed: opts.seed, count: null, durationS: opts.durationS });
}

/** The most requests any line of the run has in flight (Bun's fetch must allow that many). */
export function runInFlightLimit(opts: RunOptions): number {
  return Math.max(...opts.requestRates.map((rate) => inFlightLimit(opts, requestsPerLine(opts, rate))));
}

export function planPct(pct: number, opts: RunOptions, pageSize: number, share: ShardShare | null = null, workingSet = 1): CellPlan {
  const { prefixLen, suffixLen } = splitPrompt(opts.totalTokens, pct);
  const lines = opts.requestRates.map((rate, rateIndex) => {
    const count = requestsPerLine(opts, rate);
    const all = inFlightLimit(opts, count);
    return {
      rate,
      rateIndex,
      count,
      sends: share === null ? count : shareOf(count, share),
      inFlight: share === null ? all : Math.max(1, shareOf(all, share)),
      requestIdTag: `${pct}${opts.workingSets.length > 1 ? `w${workingSet}` : ""}${opts.requestRates.length > 1 ? `@${rate}` : ""}`,
      repeat: null,
    };
  });
  const numPrompts = Math.max(...lines.map((l) => l.count));
  const groups = opts.replicas !== undefined && workingSet > 1 ? shuffledGroups(numPrompts, workingSet, opts.seed) : null;
  return {
    pct,
    prefixLen,
    suffixLen,
    promptLen: opts.totalTokens,
    numPrompts,
    groupOf: groups === null ? (index) => index % workingSet : (index) => groups[index] ?? index % workingSet,
    groups,
    lines,
    share,
    indexAt: share === null ? (position) => position : (position) => share.rank + position * share.size,
    expectedCachedTokens: expectedCached(prefixLen, opts.totalTokens, pageSize),
    workingSet,
    workingSetTokens: workingSet * prefixLen,
  };
}
