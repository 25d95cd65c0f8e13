/**
 * A shard that is not the coordinator: it joins the coordinator, learns what the preflight found, then for every
 * line it is released sends its own share of the line's prompts and reports every record. Its prompts are drawn in
 * the script's order (every prompt of a pct is drawn past, so the RNG stays in step; only its share is made). It
 * sends nothing to the server but its share of measured requests.
 */
import { controlHeaders } from "../config/options.ts";
import { createHash } from "node:crypto";
import { EXIT } from "../errors.ts";
import { log } from "../log.ts";
import type { RunOptions } from "../config/options.ts";
import { loadTokenizer } from "../workload/tokenizer.ts";
import { PyRandom } from "../workload/rng.ts";
import { PromptFeed } from "../workload/prompt-feed.ts";
import type { ShardConnection } from "../shard/shard-client.ts";
import { backendFromSetup, profileFromSetup, runInfoFromSetup, serveAsShard, type WorkerPlacement } from "../shard/worker.ts";
import { toWireRecord, type JobMessage, type ShardSetup } from "../shard/messages.ts";
import type { SweepContext } from "./context.ts";
import { planPct, repeatLine, type CellPlan } from "./plan.ts";
import { sweepJobs, type SweepJob } from "./cells.ts";
import { buildPromptBatch, type PromptBatch } from "./stages/build-prompts.ts";
import { sendShare } from "./stages/measure-line.ts";
import { abortOf, sourceFilled } from "../engine/send.ts";
import { WORKER_SINK } from "./sink.ts";
import { workloadFields } from "../config/flags/bound.ts";

/** The option fields that shape run's workload: its declarations say which (config/flags: `bind.shapesWorkload`). */
export const WORKLOAD_FIELDS: readonly string[] = workloadFields("run");

/** Every option that shapes the workload or the requests: all shards must agree on them. */
export function workloadHash(opts: RunOptions): string {
  const o = opts as unknown as Record<string, unknown>;
  // Seeds are bigints and rates may be Infinity: JSON has neither, so both are written as text.
  const shaping = WORKLOAD_FIELDS.map((field) => [field, o[field]]);
  const text = JSON.stringify(shaping, (_, v) => (typeof v === "bigint" || (typeof v === "number" && !Number.isFinite(v)) ? String(v) : v));
  return createHash("sha256").update(text).digest("hex").slice(0, 16);
}

/** Runs this process as shard `rank`; resolves with its exit code. */
export async function runShardWorker(opts: RunOptions, me: WorkerPlacement, interrupt: AbortSignal): Promise<number> {
  return serveAsShard(me, workloadHash(opts), async (conn) => {
    const ctx = await workerContext(opts, conn.setup, me);
    try {
      return await serve(conn, ctx, opts, interrupt);
    } finally {
      await ctx.prompts?.close();
    }
  });
}

async function workerContext(opts: RunOptions, setup: ShardSetup, me: WorkerPlacement): Promise<SweepContext> {
  const tokenizer = await loadTokenizer(opts.tokenizer, { revision: opts.revision });
  tokenizer.prepare();
  const backend = backendFromSetup(setup, me.rank);
  // A shard writes no file: the coordinator writes everything from the union.
  const own: RunOptions = { ...opts, outputFile: null, dumpPrompts: null };
  return {
    opts: own,
    io: { sink: WORKER_SINK },
    backend,
    ctl: { baseUrl: opts.baseUrl, headers: controlHeaders(opts) },
    server: profileFromSetup(setup),
    tokenizer,
    prompts: backend.promptEncoding === "token_ids" ? new PromptFeed(tokenizer.population, opts.seed) : null,
    rng: new PyRandom(opts.seed),
    runId: setup.run_id,
    run: runInfoFromSetup(setup, backend),
    share: { rank: me.rank, size: me.size },
  };
}

/** Answers the coordinator until it stops the run (exit 0) or goes away (exit 1). */
async function serve(conn: ShardConnection, ctx: SweepContext, opts: RunOptions, interrupt: AbortSignal): Promise<number> {
  let running: { stop: AbortController; go: (job: number, startEpochMs: number) => void; done: Promise<void> } | null = null;
  let nextJob = 0;
  const jobs = sweepJobs(opts);
  const cell: CellPrompts = { job: null, plan: null, batch: null };
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
      else if (m.t === "go") running?.go(m.job, m.start_epoch_ms);
      else if (m.t === "stop") {
        running?.stop.abort();
        await running?.done;
        return EXIT.ok;
      } else if (m.t === "job") {
        const expected = jobs[nextJob];
        if (m.job !== nextJob || expected?.pct !== m.pct || expected.workingSet !== m.working_set || expected.rateIndex !== m.rate_index) {
          const want = expected ? `pct ${expected.pct}, working set ${expected.workingSet}, rate ${expected.rateIndex}` : "none";
          conn.link.send({
            t: "failed",
            message: `expected job ${nextJob} (${want}), got job ${m.job} (pct ${m.pct}, working set ${m.working_set}, rate ${m.rate_index})`,
          });
          return EXIT.runtime;
        }
        nextJob++;
        await running?.done;
        const stop = new AbortController();
        if (interrupt.aborted) stop.abort();
        let go: (startEpochMs: number) => void = () => {};
        const started = new Promise<number>((resolve) => (go = resolve));
        const job = m.job;
        running = {
          stop,
          go: (n, startEpochMs) => {
            if (n === job) go(startEpochMs);
          },
          done: runJob(conn, ctx, m, expected, cell, started, stop.signal),
        };
      }
    }
  } finally {
    interrupt.removeEventListener("abort", onInterrupt);
  }
}

/** The prompts of the cell (pct, working set) whose lines are being run: drawn once, resent by each line. */
interface CellPrompts {
  job: SweepJob | null;
  plan: CellPlan | null;
  batch: PromptBatch | null;
}

/**
 * One line: draw (the first line of a cell) and fill the look-ahead, say ready, then begin the line's schedule when the
 * coordinator's "go" says (`started`: that time, epoch ms on this process's clock), and report every record.
 */
async function runJob(
  conn: ShardConnection,
  ctx: SweepContext,
  job: JobMessage,
  expected: SweepJob,
  cell: CellPrompts,
  started: Promise<number>,
  signal: AbortSignal,
): Promise<void> {
  try {
    ctx.io = { ...ctx.io, signal };
    if (cell.job === null || cell.job.cell !== expected.cell) {
      cell.plan = planPct(job.pct, ctx.opts, ctx.server.pageSize, ctx.share, job.working_set);
      cell.batch = await buildPromptBatch(cell.plan, ctx);
      cell.job = expected;
    }
    const plan = cell.plan!;
    const line = repeatLine(plan.lines[job.rate_index]!, expected.repeat);
    const prompts = cell.batch!.openLine(line);
    try {
      await sourceFilled(prompts, signal);
      conn.link.send({ t: "ready", job: job.job });
      const startEpochMs = await Promise.race([started, abortOf(signal).then(() => null)]);
      const m = await sendShare(plan, line, prompts, ctx, signal, startEpochMs === null ? undefined : startEpochMs - performance.timeOrigin);
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
    } finally {
      prompts.close();
    }
  } catch (err) {
    conn.link.send({ t: "failed", message: `job ${job.job} (pct ${job.pct}): ${(err as Error)?.message ?? err}` });
  }
}
