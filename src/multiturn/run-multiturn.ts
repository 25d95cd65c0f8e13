/**
 * `warmbench multiturn`: conversations that grow turn by turn, as SGLang's benchmark/hicache/bench_multiturn.py runs
 * them, with exact token ids. Check the outputs, load the tokenizer, preflight the server and refuse a conversation
 * that cannot fit it (exit 2, before anything is sent), flush and prove it, warm the system prompts, then drive the
 * conversations (driver.ts) and write each round when it completes: a table row on stdout, a JSONL line, its turns'
 * ids (--dump-prompts) and details (--request-details).
 */
import { appendFileSync, writeFileSync } from "node:fs";
import { BenchError } from "../errors.ts";
import { log } from "../log.ts";
import type { MultiturnOptions } from "../config/options.ts";
import { backendFor } from "../backends/index.ts";
import { bodyFromParts } from "../backends/body.ts";
import type { Control } from "../backends/types.ts";
import { nowMs } from "../client/clock.ts";
import { hitRateBetween, scrapeCacheCounters, type CacheCounters } from "../client/prometheus.ts";
import { resolveGeneratedText, streamRequest } from "../client/stream.ts";
import type { RoundRecord } from "../metrics/round-record.ts";
import { startClientMonitor, describeSaturation, type ClientMonitor } from "../metrics/self-check.ts";
import { formatTurnDetail, turnRequestIdOf } from "../output/details.ts";
import { formatJsonl } from "../report/jsonl.ts";
import { appendJsonlLine, checkOutputWritable } from "../output/jsonl-file.ts";
import { renderRoundRow, renderRoundTableFooter, renderRoundTableHeader, roundTitle } from "../report/rounds.ts";
import { newRunId, runInfo } from "../sweep/run-sweep.ts";
import { prepareRun } from "../sweep/prepare.ts";
import { streamRequestFor } from "../sweep/request.ts";
import { loadTokenizer } from "../workload/tokenizer.ts";
import { PyRandom } from "../workload/rng.ts";
import { serializeIds } from "../workload/prompts.ts";
import type { MultiturnContext, MultiturnIo } from "./context.ts";
import { Conversation, type TurnPlan } from "./conversation.ts";
import { driveConversations } from "./driver.ts";
import { multiturnInFlight } from "../config/options.ts";
import { resolveTurnOutput } from "./output-ids.ts";
import { checkConversationFits } from "./plan.ts";
import { prepareCache, type Prepared } from "./prepare.ts";
import { turnRandom } from "./rngs.ts";
import { summarizeRound, type TurnResult } from "./summarize-round.ts";

export interface MultiturnOutcome {
  rounds: RoundRecord[];
  failedRequests: number;
  interrupted: boolean;
  /** Rounds whose cache check failed under --verify-cache strict. */
  cacheFailures: number;
  /** Rounds during which the client itself was saturated. */
  saturatedRounds: number;
}

export async function runMultiturn(opts: MultiturnOptions, io: MultiturnIo): Promise<MultiturnOutcome> {
  const { ctl, tokenizer, backend, server } = await prepareRun(opts, io.signal);
  checkConversationFits(opts, server);
  if (backend.deltaText) log.warn(`--backend ${opts.backend}: answers come back as text; turns after the first re-tokenize them and are approximate`);
  if (["input_ids", "prompt", "stream"].some((k) => k in opts.extraRequestBody)) {
    log.warn("--extra-request-body overrides the prompt or streaming: the conversations are not what warmbench built");
  }
  if (opts.flush === "none") log.warn("--flush none: the cache is NOT flushed before round 0; earlier runs' prefixes may still be cached");
  if (opts.workingSet > opts.numClients) {
    log.warn(`--working-set ${opts.workingSet} > --num-clients ${opts.numClients}: only ${opts.numClients} of the system prompts are used (all are warmed)`);
  }
  // Built now, off every clock: re-tokenizing an answer must not wait for it.
  tokenizer.prepare();

  const ctx: MultiturnContext = { opts, io, backend, ctl, server, tokenizer, runId: newRunId(), run: runInfo(opts, server, backend) };
  const rounds = new RoundWriter(ctx);
  // System prompts are drawn from random.Random(seed) in order, as the sweep draws its prefixes.
  const rng = new PyRandom(opts.seed);
  const systems: Uint32Array[] = [];
  for (let k = 0; k < (opts.sharedSystemTokens > 0 ? opts.workingSet : 0); k++) {
    const ids = new Uint32Array(opts.sharedSystemTokens);
    rng.choicesInto(tokenizer.population, ids, 0, ids.length);
    systems.push(ids);
  }
  rounds.prepared = await prepareCache(ctx, systems);
  const systemParts = systems.map((ids) => ({ digits: serializeIds(ids), length: ids.length }));
  const conversations = Array.from({ length: opts.numClients }, (_, c) => {
    const slot = c % opts.workingSet;
    return new Conversation(c, slot, systemParts[slot] ?? null, turnRandom(opts.seed, c));
  });
  const template = backend.createBodyTemplate({ maxNewTokens: opts.outputLen, ignoreEos: !opts.disableIgnoreEos, extra: opts.extraRequestBody, model: server.model });

  io.out(renderRoundTableHeader(roundTitle({
    num_clients: opts.numClients, num_rounds: opts.numRounds, shared_system_tokens: opts.sharedSystemTokens, first_turn_tokens: opts.firstTurnTokens,
    turn_tokens: opts.turnTokens, output_len: opts.outputLen, round_barrier: opts.roundBarrier, ready_queue_policy: opts.readyQueuePolicy, working_set: opts.workingSet,
  })));
  if (opts.roundBarrier) rounds.countersBefore.set(0, await scrapeCacheCounters(ctl));
  log.info(`Running ${opts.numClients} conversations of ${opts.numRounds} turns (max_concurrency=${opts.maxConcurrency}) ...`);
  await driveConversations(conversations, multiturnInFlight(opts), opts, {
    send(conv) {
      const turnTokens = conv.round === 0 ? opts.firstTurnTokens : opts.turnTokens;
      const turn = conv.nextTurn(tokenizer.population, turnTokens, server.pageSize);
      const requestId = opts.requestDetails ? turnRequestIdOf(ctx.runId, conv.client, turn.round) : undefined;
      const body = bodyFromParts(template, turn.parts);
      rounds.noteSent(turn);
      const done = streamRequest({
        ...streamRequestFor(ctx, body, { index: conv.client, promptLen: turn.promptLen, maxNewTokens: opts.outputLen, requestId }),
        keepPayloads: true,
      });
      return { turn, done };
    },
    settled(conv, turn, rec) {
      if (rec.ok) {
        const output = resolveTurnOutput(rec, backend, server.textMode, tokenizer);
        conv.answered(turn, output.ids, output.approximate);
      } else {
        conv.end();
      }
      rounds.noteEnded(turn, rec);
    },
    roundStarted: (round) => rounds.start(round),
    roundComplete: (round, interrupted) => rounds.complete(round, interrupted),
  }, io.signal);
  io.out(renderRoundTableFooter(rounds.outcome.rounds));
  if (io.signal?.aborted) rounds.outcome.interrupted = true;
  if (!rounds.outcome.interrupted && rounds.outcome.rounds.every((r) => r.completed === 0)) {
    throw new BenchError("All turns failed: no conversation got past its first turn.");
  }
  if (opts.outputFile) log.info(`JSONL results saved to ${opts.outputFile}`);
  return rounds.outcome;
}

/** Per-round bookkeeping while the driver runs, and each round's summary and output when it completes. */
class RoundWriter {
  readonly outcome: MultiturnOutcome = { rounds: [], failedRequests: 0, interrupted: false, cacheFailures: 0, saturatedRounds: 0 };
  prepared: Prepared = { flushed: false, flushVerified: null, warmCachedTokens: null };
  /** With the barrier: the server's cache counters when each round starts. */
  readonly countersBefore = new Map<number, CacheCounters | null>();
  private readonly turns = new Map<number, TurnResult[]>();
  private readonly sentPerRound = new Map<number, number>();
  private readonly monitors = new Map<number, { monitor: ClientMonitor; startMs: number; endMs: number; startedAt: string }>();

  constructor(private readonly ctx: MultiturnContext) {}

  start(round: number): void {
    this.monitors.set(round, { monitor: startClientMonitor(), startMs: nowMs(), endMs: nowMs(), startedAt: new Date().toISOString() });
  }

  noteSent(turn: TurnPlan): void {
    this.sentPerRound.set(turn.round, (this.sentPerRound.get(turn.round) ?? 0) + 1);
  }

  noteEnded(turn: TurnPlan, rec: TurnResult["rec"]): void {
    const list = this.turns.get(turn.round) ?? [];
    list.push({ plan: turn, rec });
    this.turns.set(turn.round, list);
    const m = this.monitors.get(turn.round);
    if (m !== undefined) m.endMs = nowMs();
  }

  async complete(round: number, interrupted: boolean): Promise<void> {
    const { ctx } = this;
    const { opts } = ctx;
    const turns = this.turns.get(round) ?? [];
    this.turns.delete(round);
    const m = this.monitors.get(round);
    this.monitors.delete(round);
    const health = m?.monitor.stop() ?? startClientMonitor().stop();
    // Text is parsed only now, off the hot path (the retokenized output counts need it).
    for (const t of turns) resolveGeneratedText(t.rec);
    let serverHitRate: number | null = null;
    if (opts.roundBarrier && !interrupted) {
      const after = await scrapeCacheCounters(ctx.ctl);
      serverHitRate = hitRateBetween(this.countersBefore.get(round) ?? null, after);
      this.countersBefore.set(round + 1, after);
    }
    const { record, problems } = summarizeRoundOf(ctx, round, turns, this, interrupted, health, serverHitRate, m);
    for (const problem of problems) log.warn(`cache check (round ${round}): ${problem}`);
    if (record.client_saturated) log.warn(`round ${round}: ${describeSaturation(health)}`);
    const failed = turns.filter((t) => !t.rec.ok);
    if (failed.length > 0) log.warn(`round ${round}: ${failed.length}/${turns.length} turns failed (their conversations end): ${failed[0]?.rec.failureKind}: ${failed[0]?.rec.failureMessage.slice(0, 160)}`);
    ctx.io.out(renderRoundRow(record));
    if (opts.outputFile) appendJsonlLine(opts.outputFile, formatJsonl(record));
    if (opts.dumpPrompts) appendFileSync(opts.dumpPrompts, turns.map((t) => dumpLine(t.plan)).join(""));
    if (opts.requestDetails && turns.length > 0) {
      appendFileSync(opts.requestDetails, turns.map((t) => formatTurnDetail(ctx.runId, t.plan.client, t.plan.round, t.plan.expectedCachedTokens, t.rec)).join("\n") + "\n");
    }
    const o = this.outcome;
    o.rounds.push(record);
    o.failedRequests += record.failed;
    if (opts.verifyCache === "strict" && (record.cache_check === "mismatch" || record.cache_check === "unreported")) o.cacheFailures++;
    if (record.client_saturated) o.saturatedRounds++;
    if (interrupted) o.interrupted = true;
  }

  plannedTurns(round: number, ended: number): number {
    return Math.max(this.sentPerRound.get(round) ?? 0, ended);
  }
}

function summarizeRoundOf(
  ctx: MultiturnContext,
  round: number,
  turns: TurnResult[],
  w: RoundWriter,
  interrupted: boolean,
  health: ReturnType<ClientMonitor["stop"]>,
  serverHitRate: number | null,
  m: { startMs: number; endMs: number; startedAt: string } | undefined,
) {
  return summarizeRound(
    {
      round,
      turns,
      plannedTurns: w.plannedTurns(round, turns.length),
      durationS: m === undefined ? 0 : Math.max(m.endMs - m.startMs, 1e-3) / 1000,
      startedAt: m?.startedAt ?? new Date().toISOString(),
      interrupted,
      health,
      serverHitRate,
      flushVerified: w.prepared.flushVerified,
      warmCachedTokens: w.prepared.warmCachedTokens,
      first: w.outcome.rounds.length === 0,
    },
    ctx,
  );
}

const textDecoder = new TextDecoder();

/** One --dump-prompts line per turn: which conversation and round, what it should find cached, and its ids. */
function dumpLine(t: TurnPlan): string {
  const ids = t.parts.filter((p) => p.length > 0).map((p) => textDecoder.decode(p)).join(",");
  return (
    `{"client":${t.client},"round":${t.round},"system_index":${t.systemIndex},"prompt_len":${t.promptLen},` +
    `"expected_cached_tokens":${t.expectedCachedTokens},"min_cached_tokens":${t.minCachedTokens},"approximate":${t.approximate},"input_ids":[${ids}]}\n`
  );
}
