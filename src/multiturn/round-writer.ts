/**
 * Per-round bookkeeping while the driver runs, and each round planned as a point when it completes: with shards, the
 * round's turns of every process united first; then the engine makes, judges and sends out its line, its turns' ids
 * (--dump-prompts) and their details (engine/round-lines.ts). With the barrier, the next round is released to the
 * shards only after this one was written.
 */
import { nowMs } from "../client/clock.ts";
import { hitRateBetween, scrapeCacheCounters, type CacheCounters } from "../client/prometheus.ts";
import { resolveGeneratedText } from "../client/stream-events.ts";
import type { RoundRecord } from "../schema/lines.ts";
import { startClientMonitor, type ClientHealth, type ClientMonitor } from "../metrics/self-check.ts";
import type { MultiturnContext } from "./context.ts";
import type { Prepared } from "./prepare.ts";
import type { RoundShards } from "./shards.ts";
import { roundLines } from "../engine/round-lines.ts";
import { turnIdsText, turnKey, type TurnPlan, type TurnResult } from "../workload/turn-plan.ts";
import type { RoundHistory } from "./round-cache.ts";
import type { FidelitySample } from "../engine/fidelity-check.ts";
import type { Measurement } from "../engine/measure.ts";
import type { PointPlan } from "../engine/point-plan.ts";
import type { EngineSession } from "../engine/open-session.ts";
import type { PointWatches } from "../engine/run-point.ts";
import { momentsOf, type PointMoments } from "../engine/point-moments.ts";
import type { MultiturnOptions } from "../config/options.ts";

export interface MultiturnOutcome {
  rounds: RoundRecord[];
  failedRequests: number;
  interrupted: boolean;
  /** Rounds whose cache check failed under --verify-cache strict. */
  cacheFailures: number;
  /** Rounds during which the client itself was saturated. */
  saturatedRounds: number;
}

interface Window {
  monitor: ClientMonitor;
  startMs: number;
  endMs: number;
  startedAt: string;
}

export class RoundWriter {
  readonly outcome: MultiturnOutcome = { rounds: [], failedRequests: 0, interrupted: false, cacheFailures: 0, saturatedRounds: 0 };
  prepared: Prepared = { flushed: false, flushVerified: null, flushProbeCachedTokens: null, warmCachedTokens: null };
  /** Every turn so far, for each round's cache model (and, with several replicas, its hit-loss ledger). */
  cache: RoundHistory | null = null;
  /** With the barrier: the server's cache counters when each round starts. */
  readonly countersBefore = new Map<number, CacheCounters | null>();
  private readonly turns = new Map<number, TurnResult[]>();
  private readonly sentPerRound = new Map<number, number>();
  private readonly windows = new Map<number, Window>();
  /** Each round's watches (the studies'), begun before its first turn and stopped by its point. */
  private readonly watching = new Map<number, { watches: PointWatches; moments: PointMoments }>();

  constructor(
    private readonly session: EngineSession<MultiturnOptions>,
    private readonly ctx: MultiturnContext,
    private readonly shards: RoundShards | null = null,
  ) {}

  start(round: number): void {
    this.windows.set(round, { monitor: startClientMonitor(), startMs: nowMs(), endMs: nowMs(), startedAt: new Date().toISOString() });
    // Without the barrier the rounds overlap: the watch starts as the first turn goes, its start unmarked.
    if (!this.watching.has(round)) this.watchRound(round);
  }

  /**
   * With the barrier, before round `round` is released: the studies start watching it and mark the measurement's
   * start (nothing of the round has gone yet and every earlier round has ended), so its counters can be reconciled.
   */
  async prime(round: number): Promise<void> {
    if (round >= this.ctx.opts.numRounds || this.watching.has(round)) return;
    await this.watchRound(round).measuring?.();
  }

  /** Stops the watches of rounds that never ran (their conversations had ended, or the run was cut). */
  async closeWatches(): Promise<void> {
    const left = [...this.watching.values()];
    this.watching.clear();
    for (const { watches } of left) for (const w of watches) await w?.stop();
  }

  private watchRound(round: number): PointMoments {
    const watches = this.session.watch(`round ${round}`, { signal: this.ctx.io.signal });
    const moments = momentsOf(watches);
    this.watching.set(round, { watches, moments });
    return moments;
  }

  noteSent(turn: TurnPlan): void {
    this.sentPerRound.set(turn.round, (this.sentPerRound.get(turn.round) ?? 0) + 1);
    this.watching.get(turn.round)?.moments.sent?.();
  }

  noteEnded(turn: TurnPlan, rec: TurnResult["rec"]): void {
    const list = this.turns.get(turn.round) ?? [];
    list.push({ plan: turn, rec });
    this.turns.set(turn.round, list);
    const w = this.windows.get(turn.round);
    if (w !== undefined) w.endMs = nowMs();
    this.watching.get(turn.round)?.moments.settled?.(rec);
  }

  async complete(round: number, interrupted: boolean, ran: boolean): Promise<void> {
    const { ctx } = this;
    const { opts } = ctx;
    let turns = this.turns.get(round) ?? [];
    this.turns.delete(round);
    const w = this.windows.get(round);
    this.windows.delete(round);
    let health: ClientHealth = (w?.monitor ?? startClientMonitor()).stop();
    let window: { startMs: number; endMs: number; startedAt: string } | undefined = w;
    let shardsReport = null;
    let planned = Math.max(this.sentPerRound.get(round) ?? 0, turns.length);
    if (this.shards !== null) {
      const own = turns.length;
      const u = await this.shards.unite(round, turns, health, interrupted);
      ({ turns, health, report: shardsReport } = u);
      interrupted ||= u.interrupted;
      planned += turns.length - own;
      if (u.startMs !== null && u.endMs !== null)
        window = { startMs: u.startMs, endMs: u.endMs, startedAt: w?.startedAt ?? new Date(performance.timeOrigin + u.startMs).toISOString() };
    }
    const watched = this.watching.get(round);
    this.watching.delete(round);
    // A round no process started (every conversation had ended) has no line.
    if (ran || turns.length > 0) await this.write(round, turns, interrupted, health, window, planned, shardsReport, watched?.watches);
    else for (const w of watched?.watches ?? []) await w?.stop();
    if (opts.roundBarrier && !interrupted) {
      await this.prime(round + 1);
      this.shards?.release(round + 1);
    }
  }

  private async write(
    round: number,
    turns: TurnResult[],
    interrupted: boolean,
    health: ClientHealth,
    w: { startMs: number; endMs: number; startedAt: string } | undefined,
    plannedTurns: number,
    shards: RoundRecord["shards"],
    watches: PointWatches | undefined,
  ): Promise<void> {
    const { ctx } = this;
    const { opts } = ctx;
    // Text is parsed only now, off the hot path (the retokenized output counts need it).
    for (const t of turns) resolveGeneratedText(t.rec);
    let serverHitRate: number | null = null;
    if (opts.roundBarrier && !interrupted) {
      const after = await scrapeCacheCounters(ctx.ctl);
      serverHitRate = hitRateBetween(this.countersBefore.get(round) ?? null, after);
      this.countersBefore.set(round + 1, after);
    }
    const last = round === opts.numRounds - 1 && !interrupted;
    const history = this.cache;
    const records = history?.add(turns) ?? turns.map((t) => ({ ...t.rec, index: turnKey(opts.numClients, t.plan.round, t.plan.client) }));
    const durationS = w === undefined ? 0 : Math.max(w.endMs - w.startMs, 1e-3) / 1000;
    const startedAt = w?.startedAt ?? new Date().toISOString();
    const measured: Measurement = { records, t0Ms: w?.startMs ?? 0, durationS, startedAt, interrupted, health, serverHitRate, shards: null };
    const plan: PointPlan<RoundRecord> = {
      // The flush and the warm were before round 0 (prepare.ts); each round finds the cache its predecessors left.
      reset: null,
      warm: null,
      route: ctx.router === undefined ? null : { router: ctx.router },
      send: { measured },
      cache: history?.view() ?? null,
      fidelity: opts.fidelity !== undefined && last ? { samples: () => lastTurnSamples(ctx, turns), outputLen: opts.outputLen } : null,
      lines: roundLines({
        round,
        turns,
        plannedTurns,
        interrupted,
        health,
        serverHitRate,
        shards,
        durationS,
        startedAt,
        flushVerified: this.prepared.flushVerified,
        flushProbeCachedTokens: this.prepared.flushProbeCachedTokens,
        warmCachedTokens: this.prepared.warmCachedTokens,
        first: this.outcome.rounds.length === 0,
        context: ctx,
        sink: ctx.io.sink,
      }),
    };
    const { lines } = await this.session.runPoint(plan, { signal: ctx.io.signal, ...(watches === undefined ? {} : { watches }) });
    const record = lines[0]!;
    const o = this.outcome;
    o.rounds.push(record);
    o.failedRequests += record.failed;
    if (opts.verifyCache === "strict" && (record.cache_check === "mismatch" || record.cache_check === "unreported")) o.cacheFailures++;
    if (record.client_saturated) o.saturatedRounds++;
    if (interrupted) o.interrupted = true;
  }
}

/**
 * --check-fidelity's samples, after the last round (nothing is measured after it): the last turns of up to
 * --fidelity-sample conversations (answered, and built from the server's own ids), each asked cold and then warm
 * after its history alone, which is what the turn found cached in the run.
 */
function lastTurnSamples(ctx: MultiturnContext, turns: readonly TurnResult[]): FidelitySample[] {
  return turns
    .filter((t) => t.rec.ok && !t.plan.approximate)
    .slice(0, ctx.opts.fidelity!.sample)
    .map((t) => ({ ids: turnIdsText(t.plan).split(",").map(Number), prefixLen: t.plan.historyLen }));
}
