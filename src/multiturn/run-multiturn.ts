/**
 * `warmbench multiturn`: conversations that grow turn by turn, as SGLang's benchmark/hicache/bench_multiturn.py runs
 * them, with exact token ids. Check the outputs, load the tokenizer, preflight the server and refuse a conversation
 * that cannot fit it (exit 2, before anything is sent), start the shards (--workers, --shard), flush and prove it,
 * warm the system prompts, then send this process's conversations through the engine's send (driver.ts is their
 * request source) and plan each round as a point when it completes (round-writer.ts), united with the other
 * processes' turns of it.
 */
import { BenchError } from "../errors.ts";
import { log } from "../log.ts";
import type { MultiturnOptions } from "../config/options.ts";
import { scrapeCacheCounters } from "../client/prometheus.ts";
import type { Placement } from "../shard/placement.ts";
import { openSession, type EngineSession } from "../engine/open-session.ts";
import type { MultiturnContext, MultiturnIo } from "./context.ts";
import { driveConversations } from "./driver.ts";
import { selfPacedSend } from "../engine/send.ts";
import { multiturnInFlight } from "../config/options.ts";
import { checkConversationFits } from "./plan.ts";
import { prepareCache } from "./prepare.ts";
import { conversationRoute } from "./conversation-route.ts";
import { RoundHistory } from "./round-cache.ts";
import { RoundWriter, type MultiturnOutcome } from "./round-writer.ts";
import { conversationHash, RoundShards } from "./shards.ts";
import { conversationsOf, drawSystemPrompts, inFlightOf, turnHooks } from "./turns.ts";

export async function runMultiturn(opts: MultiturnOptions, io: MultiturnIo, placement: Placement = { kind: "single" }): Promise<MultiturnOutcome> {
  // A conversation that cannot fit the model's context is refused before anything else is asked of the servers.
  const session = await openSession(opts, io.signal, { needs: { outputIds: true }, checked: (server) => checkConversationFits(opts, server) });
  const { ctl, tokenizer, backend, server, runId } = session;
  if (!backend.carriesOutputIds) log.warn(`--backend ${opts.backend}: answers come back as text; turns after the first re-tokenize them and are approximate`);
  if (["input_ids", "prompt", "stream"].some((k) => k in opts.extraRequestBody)) {
    log.warn("--extra-request-body overrides the prompt or streaming: the conversations are not what warmbench built");
  }
  if (opts.flush === "none") log.warn("--flush none: the cache is NOT flushed before round 0; earlier runs' prefixes may still be cached");
  if (opts.workingSet > opts.numClients) {
    log.warn(`--working-set ${opts.workingSet} > --num-clients ${opts.numClients}: only ${opts.numClients} of the system prompts are used (all are warmed)`);
  }
  // Built now, off every clock: re-tokenizing an answer must not wait for it.
  tokenizer.prepare();

  const group = await session.startShards(placement, conversationHash(opts));
  // A shard that fails stops the others and this process's turns: the rounds under way are written from what was measured.
  const stopped = new AbortController();
  const signal = io.signal ? AbortSignal.any([io.signal, stopped.signal]) : stopped.signal;
  const ctx: MultiturnContext = { opts, io: { ...io, signal }, backend, ctl, server, tokenizer, runId, run: session.run };
  ctx.router = session.routerFor(conversationRoute(ctx));
  const shards =
    group === null
      ? null
      : new RoundShards(group, opts, () => {
          group.coordinator.stopAll();
          stopped.abort();
        });
  const stopShards = () => group?.coordinator.stopAll();
  io.signal?.addEventListener("abort", stopShards, { once: true });
  try {
    return await converse(session, ctx, shards, group === null ? null : { rank: 0, size: group.size });
  } finally {
    io.signal?.removeEventListener("abort", stopShards);
    await group?.close();
  }
}

async function converse(
  session: EngineSession<MultiturnOptions>,
  ctx: MultiturnContext,
  shards: RoundShards | null,
  share: { rank: number; size: number } | null,
): Promise<MultiturnOutcome> {
  const { opts, io, backend, server, ctl } = ctx;
  const rounds = new RoundWriter(session, ctx, shards);
  const systems = drawSystemPrompts(ctx);
  rounds.cache = new RoundHistory(ctx, systems);
  rounds.prepared = await prepareCache(session, ctx, systems);
  const conversations = conversationsOf(ctx, systems, share);
  const template = backend.createBodyTemplate({
    maxNewTokens: opts.outputLen,
    ignoreEos: !opts.disableIgnoreEos,
    extra: opts.extraRequestBody,
    model: server.model,
  });

  io.sink.started({
    num_clients: opts.numClients,
    num_rounds: opts.numRounds,
    shared_system_tokens: opts.sharedSystemTokens,
    first_turn_tokens: opts.firstTurnTokens,
    turn_tokens: opts.turnTokens,
    output_len: opts.outputLen,
    round_barrier: opts.roundBarrier,
    ready_queue_policy: opts.readyQueuePolicy,
    working_set: opts.workingSet,
  });
  if (opts.roundBarrier) {
    rounds.countersBefore.set(0, await scrapeCacheCounters(ctl));
    await rounds.prime(0);
  }
  const processes = share === null ? "" : ` over ${share.size} processes`;
  log.info(`Running ${opts.numClients} conversations of ${opts.numRounds} turns (max_concurrency=${opts.maxConcurrency})${processes} ...`);
  // The flush and the warm are done: the shards may begin (with the barrier, round 0 only).
  if (opts.roundBarrier) shards?.release(0);
  else shards?.releaseAll();
  try {
    await driveConversations(
      conversations,
      inFlightOf(multiturnInFlight(opts), share),
      opts,
      {
        ...turnHooks(ctx, template, { sent: (turn) => rounds.noteSent(turn), ended: (turn, rec) => rounds.noteEnded(turn, rec) }),
        roundStarted: (round) => rounds.start(round),
        roundComplete: (round, interrupted, ran) => rounds.complete(round, interrupted, ran),
      },
      selfPacedSend(ctx, "multiturn", { signal: ctx.io.signal, keepPayloads: true }),
      io.signal,
    );
  } finally {
    await rounds.closeWatches();
  }
  io.sink.ended(rounds.outcome.rounds);
  if (io.signal?.aborted) rounds.outcome.interrupted = true;
  if (shards !== null && shards.failures.length > 0) {
    throw new BenchError(`${shards.failures.join("; ")}: the rounds under way were written with what the other processes measured (interrupted: true)`);
  }
  if (!rounds.outcome.interrupted && rounds.outcome.rounds.every((r) => r.completed === 0)) {
    throw new BenchError("All turns failed: no conversation got past its first turn.");
  }
  // As a sweep line whose every request failed ends the run (exit 1), so does a round whose every turn failed: the
  // server is gone or refuses the workload, and what follows is no measurement. Every line is written by now.
  const dead = rounds.outcome.rounds.find((r) => !r.interrupted && r.sent > 0 && r.completed === 0);
  if (dead !== undefined) throw new BenchError(`All turns of round ${dead.round} failed (${dead.sent} sent): the rounds were written as measured.`);
  if (opts.outputFile) log.info(`JSONL results saved to ${opts.outputFile}`);
  return rounds.outcome;
}
