/**
 * A process of a multi-turn run that is not the coordinator: it drives its share of the conversations (clients
 * rank, rank + size, ...) and sends every round's turns to the coordinator, which writes the lines. It sends nothing
 * before round 0 is released (the coordinator flushed and warmed by then); with --round-barrier it starts round r
 * only once the coordinator released it, that is once every process finished round r-1. It writes no file.
 */
import { controlHeaders } from "../config/options.ts";
import { EXIT } from "../errors.ts";
import { log } from "../log.ts";
import type { MultiturnOptions } from "../config/options.ts";
import { startClientMonitor, type ClientMonitor } from "../metrics/self-check.ts";
import type { ShardConnection } from "../shard/shard-client.ts";
import { backendFromSetup, profileFromSetup, runInfoFromSetup, serveAsShard, type WorkerPlacement } from "../shard/worker.ts";
import { loadTokenizer } from "../workload/tokenizer.ts";
import type { MultiturnContext } from "./context.ts";
import { driveConversations } from "./driver.ts";
import { selfPacedSend } from "../engine/send.ts";
import { multiturnInFlight } from "../config/options.ts";
import { conversationHash } from "./shards.ts";
import { WORKER_SINK } from "./sink.ts";
import type { TurnResult } from "../workload/turn-plan.ts";
import { conversationsOf, drawSystemPrompts, inFlightOf, toWireTurn, turnHooks } from "./turns.ts";

/** Runs this process as shard `me.rank` of a multi-turn run; resolves with its exit code. */
export function runMultiturnShard(opts: MultiturnOptions, me: WorkerPlacement, interrupt: AbortSignal): Promise<number> {
  return serveAsShard(me, conversationHash(opts), async (conn) => serve(conn, await shardContext(opts, conn, me), me, interrupt));
}

async function shardContext(opts: MultiturnOptions, conn: ShardConnection, me: WorkerPlacement): Promise<MultiturnContext> {
  const { setup } = conn;
  const tokenizer = await loadTokenizer(opts.tokenizer, { revision: opts.revision });
  tokenizer.prepare();
  const backend = backendFromSetup(setup, me.rank);
  return {
    opts,
    io: { sink: WORKER_SINK },
    backend,
    ctl: { baseUrl: opts.baseUrl, headers: controlHeaders(opts) },
    server: profileFromSetup(setup),
    tokenizer,
    runId: setup.run_id,
    run: runInfoFromSetup(setup, backend),
  };
}

/** The rounds the coordinator released so far, and waiting for the next one (or for the run to stop). */
class Releases {
  private readonly released = new Set<number>();
  private readonly waiters = new Map<number, () => void>();

  release(round: number): void {
    this.released.add(round);
    this.waiters.get(round)?.();
  }

  wait(round: number, signal: AbortSignal): Promise<void> {
    if (this.released.has(round) || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiters.set(round, resolve);
      signal.addEventListener("abort", () => resolve(), { once: true });
    });
  }
}

async function serve(conn: ShardConnection, ctx: MultiturnContext, me: WorkerPlacement, interrupt: AbortSignal): Promise<number> {
  const { opts } = ctx;
  const stop = new AbortController();
  const onInterrupt = () => stop.abort();
  interrupt.addEventListener("abort", onInterrupt, { once: true });
  ctx.io = { ...ctx.io, signal: stop.signal };
  const releases = new Releases();
  let gone = false;
  const listening = (async () => {
    for (;;) {
      const m = await conn.next();
      if (m === null) gone = true;
      if (m === null || m.t === "stop") return stop.abort();
      if (m.t === "ping") conn.link.send({ t: "pong", id: m.id, shardEpochMs: performance.timeOrigin + performance.now() });
      else if (m.t === "job" && m.round !== undefined) releases.release(m.round);
    }
  })();

  const share = { rank: me.rank, size: me.size };
  const conversations = conversationsOf(ctx, drawSystemPrompts(ctx), share);
  const template = ctx.backend.createBodyTemplate({
    maxNewTokens: opts.outputLen,
    ignoreEos: !opts.disableIgnoreEos,
    extra: opts.extraRequestBody,
    model: ctx.server.model,
  });
  const turns = new Map<number, TurnResult[]>();
  const windows = new Map<number, { monitor: ClientMonitor; startEpochMs: number }>();
  const answered = new Set<number>();
  const epochNow = () => performance.timeOrigin + performance.now();
  const sendRound = (round: number, interrupted: boolean) => {
    const list = turns.get(round) ?? [];
    turns.delete(round);
    const w = windows.get(round);
    windows.delete(round);
    const health = (w?.monitor ?? startClientMonitor()).stop();
    const records = list.map((t) => toWireTurn(t, opts.dumpPrompts !== null));
    conn.link.send({ t: "records", job: round, records, health, startEpochMs: w?.startEpochMs ?? epochNow(), endEpochMs: epochNow(), interrupted });
    answered.add(round);
  };

  await releases.wait(0, stop.signal);
  if (!stop.signal.aborted) {
    await driveConversations(
      conversations,
      inFlightOf(multiturnInFlight(opts), share),
      opts,
      {
        ...turnHooks(ctx, template, {
          sent: () => {},
          ended: (turn, rec) => {
            const list = turns.get(turn.round) ?? [];
            list.push({ plan: turn, rec });
            turns.set(turn.round, list);
          },
        }),
        roundStarted: (round) => windows.set(round, { monitor: startClientMonitor(), startEpochMs: epochNow() }),
        roundComplete: async (round, interrupted) => {
          sendRound(round, interrupted);
          if (opts.roundBarrier && round + 1 < opts.numRounds) await releases.wait(round + 1, stop.signal);
        },
      },
      selfPacedSend(ctx, "multiturn", { signal: ctx.io.signal, keepPayloads: true }),
      stop.signal,
    );
  }
  // Every round gets an answer, so the coordinator never waits for one this process will not run.
  for (let r = 0; r < opts.numRounds; r++) if (!answered.has(r)) sendRound(r, true);
  await listening;
  interrupt.removeEventListener("abort", onInterrupt);
  if (gone) {
    log.error(`shard ${me.rank}: the coordinator went away`);
    return EXIT.runtime;
  }
  return EXIT.ok;
}
