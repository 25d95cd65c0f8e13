/**
 * The sweep as a measuring session (src/engine/session.ts): prepared once - tokenizer, backend, preflight, the run
 * id, the prompt worker, the shards - then one cell at a time through run-pct.ts (reset and prove, warm, measure,
 * summarize), the state one line leaves for the next carried inside. runSweep walks its cells with it; a search
 * (src/capacity) measures its probes with it as a PointSession of LinePlans, each probe a cell with its own line
 * options (one rate or concurrency, its request count), so the 0.5 s of tokenizer load and server checks are paid
 * once per search, not once per probe.
 */
import { BenchError } from "../errors.ts";
import type { RunOptions } from "../config/options.ts";
import type { ServerProfile } from "../backends/types.ts";
import { PyRandom } from "../workload/rng.ts";
import { PromptFeed } from "../workload/prompt-feed.ts";
import { openSession, type EngineSession } from "../engine/open-session.ts";
import { fatalLine, type SearchPoint, type PointSession } from "../engine/session.ts";
import type { Placement } from "../shard/placement.ts";
import { FIRST_LINE, type SweepContext, type SweepIo, type SweepState } from "./context.ts";
import { autoWorkingSets } from "./working-set-auto.ts";
import { log } from "../log.ts";
import type { SweepCell } from "./cells.ts";
import { runPct, type CellOutcome } from "./run-pct.ts";
import { workloadHash } from "./shard-worker.ts";

export interface SweepSession extends PointSession<SearchPoint> {
  readonly ctx: SweepContext;
  /** Runs every line of one cell with the run's options (the sweep's order: the state flows cell to cell). */
  cell(cell: SweepCell): Promise<CellOutcome>;
}

/** Prepares the run (throws UsageError/BenchError for what stops it, before anything is measured). */
export async function openSweepSession(
  opts: RunOptions,
  io: SweepIo,
  placement: Placement = { kind: "single" },
  prepared: (server: ServerProfile) => void = () => {},
): Promise<SweepSession> {
  const run = await openSession(opts, io.signal);
  if (opts.workingSetAuto === true) {
    opts = { ...opts, workingSets: autoWorkingSets(opts, run.server) };
    log.info(`--working-set auto: ${opts.workingSets.join(",")} (the cache holds ${run.server.info.cacheCapacityTokens} tokens)`);
  }
  // What the server's limits mean for this run is said before the shards join and anything is measured.
  prepared(run.server);
  const runId = run.runId;
  // Token-id prompts are drawn just in time by the prompt worker; it starts while the shards join.
  const prompts = run.backend.promptEncoding === "token_ids" ? new PromptFeed(run.tokenizer.population, opts.seed) : null;
  let shards: Awaited<ReturnType<typeof run.startShards>> = null;
  try {
    shards = await run.startShards(placement, workloadHash(opts));
  } catch (err) {
    await prompts?.close();
    throw err;
  }
  const ctx = contextOf(opts, io, run, prompts, shards);
  let state: SweepState = FIRST_LINE;
  return {
    ctx,
    runId,
    async cell(cell) {
      const outcome = await runPct(cell, ctx, state);
      state = outcome.state;
      return outcome;
    },
    async measure(point) {
      // Every probe sends the same prompts (its own prompt generator from --seed, as each line of a sweep cell
      // does), so probes differ only in their load; the prompts are resent, so no probe's ids carry over to the
      // next flush, and each probe is a point of its own (no TTFT fit across loads).
      const feed = prompts === null ? null : new PromptFeed(run.tokenizer.population, point.opts.seed);
      const probeCtx: SweepContext = {
        ...ctx,
        opts: point.opts,
        prompts: feed,
        rng: new PyRandom(point.opts.seed),
        probe: point.probe,
        lineLabel: point.label,
      };
      try {
        const outcome = await runPct({ pct: point.pct, workingSet: point.workingSet }, probeCtx, { ...state, probeIds: null, ttftFit: null });
        state = { ...outcome.state, probeIds: null };
        const record = outcome.records.at(-1);
        if (record === undefined) throw new BenchError(`the probe at ${point.pct}% measured no line`);
        const fatal = fatalLine(record);
        if (fatal !== null) throw new BenchError(fatal);
        return record;
      } finally {
        await feed?.close();
      }
    },
    async close() {
      await shards?.close();
      await prompts?.close();
    },
  };
}

function contextOf(
  opts: RunOptions,
  io: SweepIo,
  session: EngineSession<RunOptions>,
  prompts: PromptFeed | null,
  shards: SweepContext["shards"],
): SweepContext {
  const { ctl, tokenizer, backend, server, runId } = session;
  return {
    session,
    opts,
    io,
    backend,
    ctl,
    server,
    tokenizer,
    prompts,
    rng: new PyRandom(opts.seed),
    runId,
    run: session.run,
    share: shards ? { rank: 0, size: shards.size } : null,
    shards,
  };
}
