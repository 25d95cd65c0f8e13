/**
 * The timed part of a pct in one process: stream this process's prompts (all of them, or its shard's share) under
 * its concurrency limit, one record per request, with the client's self-check around it. Nothing but recording
 * happens on the clock.
 */
import { runPool } from "../../client/pool.ts";
import { nowMs } from "../../client/clock.ts";
import { resolveGeneratedText, streamRequest } from "../../client/stream.ts";
import type { RequestRecord } from "../../metrics/record.ts";
import { startClientMonitor, type ClientHealth } from "../../metrics/self-check.ts";
import { requestIdOf } from "../../report/details.ts";
import { startProgress } from "../../report/progress.ts";
import type { SweepContext } from "../context.ts";
import type { PctPlan } from "../plan.ts";
import { streamRequestFor } from "../request.ts";
import type { PromptBatch } from "./build-prompts.ts";

/** What one process measured of a pct. */
export interface ShareMeasurement {
  /** Every request that ran to an end (cancelled ones were never measured and are left out). */
  records: RequestRecord[];
  /** First send and last completion window, nowMs() clock. */
  startMs: number;
  endMs: number;
  interrupted: boolean;
  health: ClientHealth;
}

export async function measureShare(plan: PctPlan, batch: PromptBatch, ctx: SweepContext, signal: AbortSignal | undefined): Promise<ShareMeasurement> {
  const { opts } = ctx;
  const monitor = startClientMonitor();
  const progress = startProgress(plan.indices.length, `${plan.pct}%`, { quiet: opts.quiet || !ctx.showProgress });
  const startMs = nowMs();
  const settled = await runPool(
    plan.indices.length,
    plan.inFlight,
    (k) => {
      const i = plan.indices[k]!;
      return streamRequest({
        ...streamRequestFor(ctx, batch.body(i), {
          index: i,
          promptLen: plan.promptLen,
          maxNewTokens: opts.outputLen,
          requestId: opts.requestDetails ? requestIdOf(ctx.runId, plan.pct, i) : undefined,
        }),
        signal,
      });
    },
    { signal, onSettled: (_i, r) => progress.settled(r.ok, r.outputLen) },
  );
  const endMs = nowMs();
  progress.stop();
  const health = monitor.stop();
  const records = settled.filter((r): r is RequestRecord => r !== undefined && r.failureKind !== "cancelled");
  // Text is parsed only now: doing it as each stream ended would hold up the other streams' events.
  for (const r of records) resolveGeneratedText(r);
  return { records, startMs, endMs, interrupted: signal?.aborted === true, health };
}
