/**
 * A shard that is not the coordinator: it joins the coordinator, learns what the preflight found, then for every
 * pct it is released draws the pct's prompts in the script's order (all of them: the RNG must stay in step), sends
 * its own share, and reports every record. It sends nothing to the server but its share of measured requests.
 */
import { createHash } from "node:crypto";
import { BenchError, EXIT } from "../errors.ts";
import { log } from "../log.ts";
import type { RunOptions } from "../options.ts";
import { backendFor, ENGINES, type EndpointChoice } from "../backends/index.ts";
import { NO_SERVER_INFO } from "../backends/server-info.ts";
import { loadTokenizer } from "../workload/tokenizer.ts";
import { PyRandom } from "../workload/rng.ts";
import { joinCoordinator, type ShardConnection } from "../shard/shard-client.ts";
import { toWireRecord, type JobMessage, type ShardSetup } from "../shard/messages.ts";
import type { ListenAddress } from "../shard/coordinator.ts";
import type { SweepContext } from "./context.ts";
import { planPct } from "./plan.ts";
import { sweepCells } from "./cells.ts";
import { buildPromptBatch } from "./stages/build-prompts.ts";
import { measureShare } from "./stages/measure-share.ts";
import { VERSION } from "../version.ts";

/** Every option that shapes the workload or the requests: all shards must agree on them. */
export function workloadHash(opts: RunOptions): string {
  const o = opts;
  const shaping = [o.backend, o.endpoint, o.baseUrl, o.tokenizer, o.revision, o.numPrompts, o.totalTokens, o.outputLen, o.maxConcurrency, o.pcts,
    o.seed.toString(), o.disableIgnoreEos, o.extraRequestBody, o.requestTimeoutS, o.stallTimeoutS, o.pageSize, o.servedModelName, o.workingSets];
  return createHash("sha256").update(JSON.stringify(shaping)).digest("hex").slice(0, 16);
}

/** How long a shard keeps trying to reach a coordinator that is still starting. */
const JOIN_DEADLINE_MS = 60_000;
/** A heartbeat tells the coordinator this shard is alive while it measures. */
const HEARTBEAT_MS = 1000;

export interface WorkerPlacement {
  rank: number;
  size: number;
  address: ListenAddress;
  token: string;
}

/** Runs this process as shard `rank`; resolves with its exit code. */
export async function runShardWorker(opts: RunOptions, me: WorkerPlacement, interrupt: AbortSignal): Promise<number> {
  const conn = await joinCoordinator(me.address, me, JOIN_DEADLINE_MS);
  const beat = setInterval(() => conn.link.send({ t: "beat" }), HEARTBEAT_MS);
  try {
    if (conn.setup.options_hash !== workloadHash(opts)) {
      conn.link.send({ t: "failed", message: "it was started with other workload options than the coordinator" });
      throw new BenchError(`shard ${me.rank}: started with other workload options than the coordinator`, EXIT.usage);
    }
    const ctx = await workerContext(opts, conn.setup, me);
    return await serve(conn, ctx, opts, interrupt);
  } catch (err) {
    if (!(err instanceof BenchError)) conn.link.send({ t: "failed", message: (err as Error)?.message ?? String(err) });
    throw err;
  } finally {
    clearInterval(beat);
    conn.link.end();
  }
}

async function workerContext(opts: RunOptions, setup: ShardSetup, me: WorkerPlacement): Promise<SweepContext> {
  const tokenizer = await loadTokenizer(opts.tokenizer, { revision: opts.revision });
  tokenizer.prepare();
  if (!(setup.backend in ENGINES)) throw new BenchError(`shard ${me.rank}: the coordinator chose backend "${setup.backend}", which this shard does not know`);
  const backend = backendFor(setup.backend as keyof typeof ENGINES, setup.endpoint as EndpointChoice);
  // A shard writes no file: the coordinator writes everything from the union.
  const own: RunOptions = { ...opts, outputFile: null, dumpPrompts: null };
  return {
    opts: own,
    io: { out: () => {} },
    backend,
    ctl: { baseUrl: opts.baseUrl, headers: opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {} },
    server: {
      info: { ...NO_SERVER_INFO, version: setup.server_version },
      model: setup.model,
      pageSize: setup.page_size,
      pageSizeSource: "server",
      textMode: setup.text_mode,
      warnings: [],
    },
    tokenizer,
    rng: new PyRandom(opts.seed),
    runId: setup.run_id,
    run: { warmbench_version: VERSION, started_at: "", options: {}, served_model: setup.model, page_size: setup.page_size,
      page_size_source: "server", server_info_source: null, server_version: setup.server_version, server_info: null,
      engine: { name: backend.engine, source: "flag", evidence: "the coordinator's preflight", endpoint: backend.generatePath,
        prompt_encoding: backend.promptEncoding, cache_slots: null, max_running: null, flush_gap: null } },
    state: { linesWritten: 0, ttftFit: null, probeIds: null, templateHeadTokens: 0 },
    share: { rank: me.rank, size: me.size },
    showProgress: false,
  };
}

/** Answers the coordinator until it stops the run (exit 0) or goes away (exit 1). */
async function serve(conn: ShardConnection, ctx: SweepContext, opts: RunOptions, interrupt: AbortSignal): Promise<number> {
  let running: { stop: AbortController; done: Promise<void> } | null = null;
  let nextJob = 0;
  const cells = sweepCells(opts);
  const onInterrupt = () => running?.stop.abort();
  interrupt.addEventListener("abort", onInterrupt);
  try {
    for (;;) {
      const m = await conn.next();
      if (m === null) {
        running?.stop.abort();
        await running?.done;
        log.error(`shard ${ctx.share!.rank}: the coordinator went away`);
        return EXIT.runtime;
      }
      if (m.t === "ping") conn.link.send({ t: "pong", id: m.id, shardEpochMs: performance.timeOrigin + performance.now() });
      else if (m.t === "stop") {
        running?.stop.abort();
        await running?.done;
        return EXIT.ok;
      } else if (m.t === "job") {
        const cell = cells[nextJob];
        if (m.job !== nextJob || cell?.pct !== m.pct || cell.workingSet !== m.working_set) {
          conn.link.send({ t: "failed", message: `expected job ${nextJob} (pct ${cell?.pct}, working set ${cell?.workingSet}), got job ${m.job} (pct ${m.pct}, working set ${m.working_set})` });
          return EXIT.runtime;
        }
        nextJob++;
        await running?.done;
        const stop = new AbortController();
        if (interrupt.aborted) stop.abort();
        running = { stop, done: runJob(conn, ctx, m, stop.signal) };
      }
    }
  } finally {
    interrupt.removeEventListener("abort", onInterrupt);
  }
}

async function runJob(conn: ShardConnection, ctx: SweepContext, job: JobMessage, signal: AbortSignal): Promise<void> {
  try {
    ctx.io = { ...ctx.io, signal };
    const plan = planPct(job.pct, ctx.opts, ctx.server.pageSize, ctx.share, job.working_set);
    const batch = buildPromptBatch(plan, ctx);
    const m = await measureShare(plan, batch, ctx, signal);
    const origin = performance.timeOrigin;
    conn.link.send({
      t: "records",
      job: job.job,
      records: m.records.map((r) => toWireRecord(r, origin)),
      health: m.health,
      startEpochMs: origin + m.startMs,
      endEpochMs: origin + m.endMs,
      interrupted: m.interrupted,
    });
  } catch (err) {
    conn.link.send({ t: "failed", message: `job ${job.job} (pct ${job.pct}): ${(err as Error)?.message ?? err}` });
  }
}
