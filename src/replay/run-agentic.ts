/**
 * An agentic corpus (WEKA sessions, TraceLab rounds) replayed as one point of the engine: the session schedule
 * (src/workload/agentic/session-schedule.ts) drives itself - a turn is due only once the answers it follows are in -
 * so the point is planned in the `{ measured }` form, as a multi-turn round is: the flush (and its proof) first,
 * through the engine's prepare; then the engine's send takes each request from agentic-driver.ts (the sessions as a
 * request source) when the schedule says, token-exact (each
 * hash id one fixed block of the run's seed, in the trace instance's namespace: prompt-chain.ts), through the
 * router where there are replicas (a session tree keyed as one: its subagents share their prefix with each other);
 * then the engine's runPoint reads every request as its hash-id chain - warm-ups (--start-at's history) in the
 * model's history, not among the point's requests - gives each its [guaranteed, possible] range and, with replicas,
 * the hit-loss ledger, and makes, judges and sends out the line from what the schedule handed out
 * (engine/agentic-lines.ts). Nothing here parses flags, renders or writes files (the sink does).
 */
import { bodyParts, type BodyTemplate } from "../backends/body.ts";
import { hitRateBetween, scrapeCacheCounters } from "../client/prometheus.ts";
import { BenchError, UsageError } from "../errors.ts";
import { log } from "../log.ts";
import type { Measurement } from "../engine/measure.ts";
import { openSession } from "../engine/open-session.ts";
import type { CacheView, PointPlan, RoutePlan } from "../engine/point-plan.ts";
import { selfPacedSend, type SourcedRequest } from "../engine/send.ts";
import { requestIdOf } from "../engine/request-id.ts";
import { canaryIds, cacheSlotsOf } from "../engine/reset-cache.ts";
import type { SweepLine } from "../metrics/sweep-line.ts";
import type { RequestRecord } from "../schema/record.ts";
import { promptChain, traceNamespace } from "../workload/agentic/prompt-chain.ts";
import { planTree } from "../workload/agentic/session-plan.ts";
import { SessionSchedule, type ScheduledRequest } from "../workload/agentic/session-schedule.ts";
import type { AgenticCall, AgenticTrace } from "../workload/agentic/session-tree.ts";
import { BlockPrefetch, callsOf } from "./agentic-prefetch.ts";
import { driveSessions } from "./agentic-driver.ts";
import { agenticLines, asTraceRequest } from "../engine/agentic-lines.ts";
import { agenticStoreTokens } from "./agentic-store.ts";
import { BlockSource } from "./blocks.ts";
import { dumpPrompts } from "./dump.ts";
import type { ReplayOptions } from "./options.ts";
import type { ReplayOutcome } from "./run-replay.ts";
import type { ReplaySink } from "./sink.ts";

const NOTHING = new Uint8Array(0);

/**
 * What is checked of the corpus before anything is sent: one block size (the cache model reads every chain at it),
 * and every call within the model's context. Each problem is a UsageError naming the file and line (exit 2).
 */
function checkCorpus(corpus: readonly AgenticTrace[], contextTokens: number | null): void {
  const first = corpus[0]!;
  const other = corpus.find((t) => t.blockSize !== first.blockSize);
  if (other !== undefined) {
    throw new UsageError(
      `${other.path}:${other.line}: block_size ${other.blockSize} differs from ${first.path}:${first.line}'s ${first.blockSize} (replay one block size at a time)`,
    );
  }
  if (contextTokens === null) return;
  for (const t of corpus) {
    const long = callsOf(t.steps).find((c) => c.inputLength + Math.max(1, c.outputLength) > contextTokens);
    if (long !== undefined) {
      throw new UsageError(
        `${t.path}:${long.line}: ${long.at}: in ${long.inputLength} + out ${long.outputLength} exceeds the model's context of ${contextTokens} tokens`,
      );
    }
  }
}

/** A 32-bit key of a string (FNV-1a): a session tree's routing key. */
function keyOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export async function runAgenticReplay(
  opts: ReplayOptions,
  corpus: readonly AgenticTrace[],
  format: string,
  io: { sink: ReplaySink; signal?: AbortSignal },
): Promise<ReplayOutcome> {
  checkCorpus(corpus, null);
  const session = await openSession(opts, io.signal, { checked: (server) => checkCorpus(corpus, server.info.contextLength ?? null) });
  const { tokenizer, backend, server, runId, run } = session;
  if (backend.promptEncoding !== "token_ids") throw new BenchError(`replay sends token ids; the ${backend.name} backend sends text`);
  const blockSize = corpus[0]!.blockSize;
  const lanes = opts.sessions ?? corpus.length;
  const trees = Math.max(corpus.length, lanes);
  const canaryMax = Math.min(...corpus.flatMap((t) => callsOf(t.steps).map((c) => c.inputLength)));
  // No block starts with the flush proof's canary (it stays cached): a block could otherwise find one token cached.
  const canaryFirst = tokenizer.population.indexOf(canaryIds(server.pageSize, canaryMax, tokenizer.population)[0]!);
  const blocks = new BlockSource(tokenizer.population, opts.seed, blockSize, canaryFirst, keptBlocks(corpus, lanes, blockSize));
  const prefetch = new BlockPrefetch(blocks, blockSize);
  const templates = new Map<number, BodyTemplate>();
  const templateFor = (maxNewTokens: number): BodyTemplate => {
    let t = templates.get(maxNewTokens);
    if (t === undefined) {
      t = backend.createBodyTemplate({ maxNewTokens, ignoreEos: !opts.disableIgnoreEos, extra: opts.extraRequestBody, model: server.model });
      templates.set(maxNewTokens, t);
    }
    return t;
  };

  // Filled as the schedule hands requests out (a request routes, and is modelled, only once it has been).
  const chains = new Map<number, { hashIds: number[]; length: number }>();
  const handed = new Map<number, ScheduledRequest>();
  // A session tree routes as one: its subagents share their own prefix with each other, not with the root.
  const sessionKey = (r: ScheduledRequest): number => keyOf(`${r.trace.path}:${r.trace.line}:${r.trace.id}#${r.instance}`);
  const route: RoutePlan = {
    keysOf: (index) => {
      const r = handed.get(index);
      return { session: r === undefined ? index : sessionKey(r), prefix: chains.get(index)?.hashIds[0] ?? null };
    },
    prefixes: [],
    prefixTokens: 0,
    warmedEverywhere: true,
    detailsOf: (index) => {
      const r = handed.get(index);
      return r === undefined ? {} : { session_key: sessionKey(r) };
    },
  };
  const router = session.routerFor(route);
  const prepared = await session.prepare(
    {
      reset: { probeIds: null, canaryMaxTokens: canaryMax, slots: cacheSlotsOf(server), prefixes: [], prefixLen: 0, learnTemplateHead: false, label: "replay" },
      warm: null,
    },
    router,
  );
  const ctx = { backend, ctl: session.ctl, io: { signal: io.signal }, opts, server, router };
  /** A call's prompt chain and body: built as it is sent, or before the origin for the lanes' first calls. */
  const build = (call: AgenticCall, trace: AgenticTrace, instance: number, clone: number, ordinal: number) => {
    const built = promptChain(call, blockSize, traceNamespace(trace, instance, clone), ordinal);
    const maxNewTokens = Math.max(1, call.outputLength);
    return { built, maxNewTokens, body: bodyParts(templateFor(maxNewTokens), NOTHING, blocks.promptDigits(built)) };
  };
  // Every lane's first call is due at the origin: 200 of them built there, one after another, made the last one tens
  // of ms late (bench agentic), so they are built before it, by instance (a --start-at lane begins with warm-ups
  // further in, built as they go).
  const ready = new Map<number, ReturnType<typeof build>>();
  const buildRequest = (r: ScheduledRequest): SourcedRequest => {
    const early = r.ordinal === 0 ? ready.get(r.instance) : undefined;
    if (early !== undefined) ready.delete(r.instance);
    const { built, maxNewTokens, body } = early ?? build(r.call, r.trace, r.instance, r.clone, r.ordinal);
    const chain = { hashIds: built.hashIds, length: built.inputLength };
    chains.set(r.requestId, chain);
    handed.set(r.requestId, r);
    // What comes next in its tree (and a lane's next tree) is drawn once this turn and every other one due with it
    // have gone: 200 lanes' first turns are due at once, and each one's look-ahead would delay the next one's send.
    setImmediate(() => {
      prefetch.ahead(r.trace, r.instance, r.clone, r.ordinal);
      const next = r.instance + lanes;
      if (r.ordinal === 0 && next < trees) prefetch.ahead(corpus[next % corpus.length]!, next, Math.floor(next / corpus.length), 0, true);
    });
    return { body, shape: { index: r.requestId, promptLen: chain.length, maxNewTokens, requestId: requestIdOf(runId, "replay", r.requestId) } };
  };
  // The lanes' first prompts drawn off the clock.
  for (let i = 0; i < Math.min(lanes, trees); i++) prefetch.ahead(corpus[i % corpus.length]!, i, Math.floor(i / corpus.length), 0, true);
  prefetch.drain();
  if (opts.startAt === null) {
    for (let i = 0; i < Math.min(lanes, trees); i++) {
      const trace = corpus[i % corpus.length]!;
      const first = callsOf(trace.steps)[0];
      if (first !== undefined) ready.set(i, build(first, trace, i, Math.floor(i / corpus.length), 0));
    }
  }
  const countersBefore = router === undefined ? await scrapeCacheCounters(session.ctl) : null;
  const startedAt = new Date().toISOString();
  const rules = {
    traceFormat: format,
    delay: opts.delay,
    spawn: opts.spawn,
    join: opts.join,
    maxIdleS: opts.maxIdleS,
    startAt: opts.startAt,
    lanes,
    sessions: trees,
    timeScale: opts.timeScale,
  };
  log.info(
    `Replaying ${trees} session(s) of ${opts.tracePath} in ${lanes} lane(s) (time scale ${opts.timeScale}; delay ${opts.delay}, spawn ${opts.spawn}, join ${opts.join}) ...`,
  );
  let maxRequests = 0;
  for (let i = 0; i < trees; i++) maxRequests += callsOf(corpus[i % corpus.length]!.steps).length;
  const drove = await driveSessions({
    scheduleAt: (originMs) => new SessionSchedule(corpus, { ...rules, sessions: trees, seed: opts.seed, originMs }),
    build: buildRequest,
    maxRequests,
    maxConcurrency: opts.maxConcurrency,
    send: selfPacedSend(ctx, "agentic replay", { signal: io.signal }),
    signal: io.signal,
  });
  const countersAfter = drove.interrupted || router === undefined ? null : await scrapeCacheCounters(session.ctl);
  // Only --dump-prompts reads the blocks again. What the run left is collected now, off the clock, so the cache
  // model's working memory over every request reuses it rather than growing the heap past it (bench agentic: peak
  // RSS 1081 MiB without, the model's step alone adding 400 MiB).
  if (!opts.dumpPrompts) blocks.release();
  Bun.gc(true);
  const isWarmup = (index: number) => handed.get(index)?.warmup === true;
  const measured = drove.records.filter((r) => !isWarmup(r.index)).sort((a, b) => a.index - b.index);
  const history = [...drove.records].sort((a, b) => a.startMs - b.startMs);
  const firstStart = measured.reduce((a, r) => Math.min(a, r.startMs), Infinity);
  const m: Measurement = {
    records: measured,
    t0Ms: measured.reduce((a, r) => Math.min(a, r.intendedMs), drove.originMs),
    durationS: measured.length === 0 ? 0 : Math.max(0, drove.endMs - firstStart) / 1000,
    startedAt,
    interrupted: drove.interrupted,
    health: drove.health,
    serverHitRate: hitRateBetween(countersBefore, countersAfter),
    shards: null,
  };
  const judged = server.cacheSlots === null || server.cacheSlots === undefined;
  const view: CacheView = {
    sequenceOf: (index) => chains.get(index),
    warmedSequenceOf: () => ({ hashIds: [], length: 0 }),
    homeKeyOf: (index) => {
      const r = handed.get(index);
      return r === undefined ? null : sessionKey(r);
    },
    blockSize,
    capacityTokens: opts.cacheTokens ?? undefined,
    history,
    judged,
  };
  const plannedPerSession = new Map<number, number>();
  for (const r of handed.values()) {
    if (r.warmup) continue;
    const all = opts.startAt === null ? callsOf(r.trace.steps).length : (plannedPerSession.get(r.instance) ?? 0) + 1;
    plannedPerSession.set(r.instance, all);
  }
  const plan: PointPlan<SweepLine> = {
    // The flush and its proof ran before the schedule started (prepare above): the point finds what they left.
    reset: null,
    warm: null,
    route: router === undefined ? null : { router },
    send: { measured: m },
    cache: view,
    lines: agenticLines({
      requests: handed,
      chains,
      originMs: drove.originMs,
      plannedPerSession,
      reset: prepared.reset,
      modelCapacityTokens: opts.cacheTokens ?? undefined,
      rules,
      blockSize,
      warmupRequests: drove.records.length - measured.length,
      workingSetTokens: workingSetOf(
        measured.map((r) => chains.get(r.index)!),
        blockSize,
      ),
      idsHash: corpusHash(corpus, blockSize, opts.seed, trees),
      summary: { opts: summaryOpts(opts, measured), server, tokenizer, backend, runId, run },
      gates: opts.gates,
      sink: io.sink,
    }),
  };
  const { lines } = await session.runPoint(plan);
  // --dump-prompts: known only once the schedule handed them out (warm-ups too), so written after the run.
  if (opts.dumpPrompts) {
    const all = [...handed.values()].sort((a, b) => a.requestId - b.requestId);
    dumpPrompts(
      all.map((s) => asTraceRequest(s, chains.get(s.requestId)!, drove.originMs)),
      blocks,
      io.sink,
    );
  }
  const line = lines[0]!;
  const outcome: ReplayOutcome = { records: lines, interrupted: m.interrupted, failedRequests: line.failed, cacheFailures: 0, saturated: 0 };
  if (opts.verifyCache === "strict" && (line.cache_check === "mismatch" || line.cache_check === "unreported")) outcome.cacheFailures++;
  if (line.client_saturated) outcome.saturated++;
  if (!m.interrupted && measured.length > 0 && measured.every((r) => !r.ok)) throw new BenchError(`All ${measured.length} replayed requests failed.`);
  return outcome;
}

/** Blocks kept drawn: agentic-store.ts's tokens, in blocks. */
function keptBlocks(corpus: readonly AgenticTrace[], lanes: number, blockSize: number): number {
  let longest = 0;
  for (const t of corpus) for (const c of callsOf(t.steps)) longest = Math.max(longest, c.inputLength);
  return Math.max(4096, Math.ceil(agenticStoreTokens(lanes, longest) / blockSize));
}

/** Distinct prompt tokens of the chains: each block counted once, at its longest use. */
function workingSetOf(chains: readonly { hashIds: readonly number[]; length: number }[], blockSize: number): number {
  const longest = new Map<number, number>();
  for (const c of chains) {
    for (const [j, h] of c.hashIds.entries()) longest.set(h, Math.max(longest.get(h) ?? 0, Math.min(blockSize, c.length - j * blockSize)));
  }
  let tokens = 0;
  for (const len of longest.values()) tokens += len;
  return tokens;
}

/** The replayed corpus's identity (the workload fingerprint's prompt_ids_hash): its traces, block size, seed and sessions. */
function corpusHash(corpus: readonly AgenticTrace[], blockSize: number, seed: bigint, trees: number): string {
  const h = new Bun.CryptoHasher("sha256");
  h.update(`agentic:${blockSize}:${seed}:${trees}\n`);
  for (const t of corpus) {
    h.update(`${t.id}\n`);
    for (const c of planTree(t, "absolute", "none").calls) h.update(`${c.call.tS},${c.call.inputLength},${c.call.outputLength},${c.call.hashIds.join(" ")}\n`);
  }
  return h.digest("hex");
}

/** The run options summarizePoint reads, as an agentic replay means them: the trace's own lengths and gaps. */
function summaryOpts(opts: ReplayOptions, records: readonly RequestRecord[]) {
  const meanOut = records.length === 0 ? 0 : Math.round(records.reduce((a, r) => a + r.outputLen, 0) / records.length);
  return { ...opts, outputLen: meanOut, burstiness: null, durationS: null, gates: [], maxConcurrency: opts.maxConcurrency };
}
