/**
 * Workers: what more processes buy. (1) Ingest capacity: the largest total event rate (one event per chunk, paced
 * streams from the C emitter in its own process) that warmbench takes with its steady-state event delay p99 within
 * a bound, at 1, 2 and 4 worker processes, with the client CPU per event of all processes together. (2) Burst
 * stamping: 1024 streams whose events come in synchronized bursts (the emitter's --sync: every stream's k-th event at
 * the same decode step, as a real engine's batch), one process against --workers auto: the delay of the last event
 * of each burst, which waits behind all the others on one JS thread.
 */
import { cpus } from "node:os";
import { progress, type ScenarioResult, type TargetCheck } from "../lib/scenario.ts";
import { fmt } from "../lib/stats.ts";
import { runTrial, serverSaturated, type BenchContext, type TrialResult } from "../lib/trial.ts";
import { trialRow } from "./accuracy.ts";
import { autoWorkers, STREAMS_PER_WORKER } from "../../src/shard/placement.ts";

/** A step is taken when the steady event delay p99 stays within this and the achieved rate within 95 % of target. */
const MAX_STEADY_DELAY_MS = 5;
const LADDER = [5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 320_000];
/** Streams of the ingest ladder: enough to spread over 4 workers, few enough for a 2-core box to start them. */
const STREAMS = 512;

interface IngestOutcome {
  workers: number;
  bestRatePerS: number;
  cpuUsPerEvent: number;
  limitedBy: string;
}

function taken(r: TrialResult): string | null {
  if (r.client.timedOut || !r.reported || r.reported.completed < r.spec.streams) return "requests failed or timed out";
  if (serverSaturated(r)) return "emitter/box saturated";
  if (!r.errors || r.errors.steadyEvents === 0) return "no steady state";
  if (r.truth.eventRatePerS < 0.95 * r.targetRatePerS) return "rate < 95 % of target";
  if (r.errors.steadyDelayP99 > MAX_STEADY_DELAY_MS) return `steady delay p99 > ${MAX_STEADY_DELAY_MS} ms`;
  return null;
}

async function climb(ctx: BenchContext, workers: number, trials: TrialResult[]): Promise<IngestOutcome> {
  const durS = ctx.quick ? 1 : 3;
  const streams = ctx.quick ? 64 : STREAMS;
  const rungs = LADDER.map((total) => ({ total, itlMs: (streams * 1000) / total }))
    .filter((r) => r.itlMs >= 1 && r.itlMs <= 1000)
    .slice(0, ctx.quick ? 2 : undefined);
  let best: IngestOutcome = { workers, bestRatePerS: 0, cpuUsPerEvent: NaN, limitedBy: "ladder top reached" };
  for (const rung of rungs) {
    const outputLen = Math.min(1000, Math.max(10, Math.round((durS * 1000) / rung.itlMs)));
    progress(`workers: ${workers} process(es), ${streams} streams, target ${rung.total} ev/s (itl ${rung.itlMs.toFixed(2)} ms)`);
    const r = await runTrial(ctx, {
      tool: "warmbench",
      streams,
      itlMs: rung.itlMs,
      outputLen,
      totalTokens: 64,
      pct: 0,
      tokenizer: ctx.tokenizers.llama2,
      timeoutMs: 90_000,
      server: "emitter",
      workers,
    });
    trials.push(r);
    const why = taken(r);
    progress(`  -> ${why ?? "taken"}: ${trialRow(r).join(" | ")}`);
    if (why !== null) return { ...best, limitedBy: why };
    best = { workers, bestRatePerS: r.truth.eventRatePerS, cpuUsPerEvent: r.clientCpuUsPerEvent, limitedBy: best.limitedBy };
  }
  return best;
}

/** Steady bursts each side needs before their p99s are compared. */
const MIN_BURSTS = 20;

async function bursts(ctx: BenchContext, workers: number | "auto", trials: TrialResult[]): Promise<TrialResult> {
  const streams = ctx.quick ? 128 : 1024;
  progress(`workers: bursts of ${streams} streams x 50 ev/s (--sync), --workers ${workers}`);
  const r = await runTrial(ctx, {
    tool: "warmbench",
    streams,
    itlMs: 20,
    outputLen: ctx.quick ? 25 : 100,
    totalTokens: 64,
    pct: 0,
    tokenizer: ctx.tokenizers.llama2,
    timeoutMs: 120_000,
    server: "emitter",
    sync: true,
    workers,
  });
  trials.push(r);
  progress(`  -> last-of-burst delay p50/p99 ${fmt(r.bursts?.lastDelayP50, 2)} / ${fmt(r.bursts?.lastDelayP99, 2)} ms over ${r.bursts?.count ?? 0} bursts`);
  return r;
}

/**
 * The burst-stamping target: auto's last-of-burst p99 against one process's. A p99 over a handful of bursts is one
 * burst's delay, and a ratio of two such figures says nothing, so none is made below MIN_BURSTS on either side.
 */
export function burstTarget(
  single: Pick<TrialResult, "bursts">,
  auto: Pick<TrialResult, "bursts">,
  autoCount: number,
  cores: number,
  quick: boolean,
): { target: TargetCheck; ratio: number | null } {
  const fewest = Math.min(single.bursts?.count ?? 0, auto.bursts?.count ?? 0);
  const ratio = single.bursts && auto.bursts && fewest >= MIN_BURSTS ? auto.bursts.lastDelayP99 / single.bursts.lastDelayP99 : null;
  const measured =
    ratio === null
      ? `not measured: ${fewest} steady burst(s) on one side (a ratio needs >= ${MIN_BURSTS} on both); auto = ${autoCount} process(es) on ${cores} cores`
      : `${fmt(ratio, 2)}x (p99 ${fmt(auto.bursts?.lastDelayP99, 2)} vs ${fmt(single.bursts?.lastDelayP99, 2)} ms) with auto = ${autoCount} process(es) on ${cores} cores`;
  return {
    target: {
      target: "burst stamping: the last event of a burst with --workers auto is delayed at most a third of one process's, where cores allow it",
      measured,
      pass: quick || ratio === null || autoCount < 3 ? null : ratio <= 1 / 3,
    },
    ratio,
  };
}

export async function runWorkers(ctx: BenchContext): Promise<ScenarioResult> {
  const t0 = performance.now();
  const trials: TrialResult[] = [];
  // Up to 8 processes where the machine has the cores for them (a GPU node), else 4.
  const counts = ctx.quick ? [1, 2] : cpus().length >= 12 ? [1, 2, 4, 8] : [1, 2, 4];
  const ingest: IngestOutcome[] = [];
  for (const w of counts) ingest.push(await climb(ctx, w, trials));
  const single = await bursts(ctx, 1, trials);
  const auto = await bursts(ctx, "auto", trials);
  const cores = cpus().length;
  const autoCount = autoWorkers(ctx.quick ? 128 : 1024, cores);
  const { target, ratio } = burstTarget(single, auto, autoCount, cores, ctx.quick);
  const rows = [
    ...ingest.map((o) => ["ingest", String(o.workers), fmt(o.bestRatePerS, 0), fmt(o.cpuUsPerEvent, 1), o.limitedBy]),
    ...[single, auto].map((r) => [
      "bursts",
      String(r.spec.workers === "auto" ? `auto (${autoCount})` : r.spec.workers),
      fmt(r.truth.eventRatePerS, 0),
      fmt(r.clientCpuUsPerEvent, 1),
      `last-of-burst delay p50 ${fmt(r.bursts?.lastDelayP50, 2)} / p99 ${fmt(r.bursts?.lastDelayP99, 2)} ms (${r.bursts?.count ?? 0} bursts)`,
    ]),
  ];
  return {
    name: "workers",
    title: "Workers: ingest capacity and burst stamping with more client processes",
    columns: ["measure", "processes", "ev/s (best taken / achieved)", "client CPU µs/event (all processes)", "limited by / bursts"],
    rows,
    targets: [target],
    notes: [
      `Ingest: ${ctx.quick ? 64 : STREAMS} paced streams from the C emitter (one event per chunk); ladder of total rates ${LADDER.join(", ")} ev/s; a step is taken when every request completes, the achieved rate is >= 95 % of the target and the steady-state event delay p99 (client receive - emitter write) is <= ${MAX_STEADY_DELAY_MS} ms. CPU per event sums the coordinator and its workers (/proc of the process tree) over the measured window.`,
      "Bursts: the emitter's --sync mode writes every stream's k-th event in one burst per 20 ms step; per burst, the delay of the event the client stamped last; p50/p99 over the steady bursts (every stream taking part).",
      `On this machine (${cores} cores) the client shares the cores with the emitter: more processes than free cores only add contention, and --workers auto picks min(cores - 1, streams / ${STREAMS_PER_WORKER}) = ${autoCount}. The scaling model for a large node is in docs/guides/workers.md ("When you need workers").`,
    ],
    trials,
    figures: { autoWorkers: autoCount, burstRatio: ratio, ...Object.fromEntries(ingest.map((o) => [`ingest${o.workers}`, o.bestRatePerS])) },
    elapsedS: (performance.now() - t0) / 1000,
  };
}
