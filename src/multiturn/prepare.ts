/**
 * Before round 0: empty the server's cache and prove it (a canary cached before the flush must find nothing after
 * it, as the sweep proves each flush), settle, then warm each system prompt of the working set once (one output
 * token), so round 0's turns can hit it.
 */
import { BenchError } from "../errors.ts";
import { interruptedError, sleepUnlessInterrupted } from "../interrupt.ts";
import { log } from "../log.ts";
import { bodyParts } from "../backends/body.ts";
import { streamRequest } from "../client/stream.ts";
import type { RequestRecord } from "../schema/record.ts";
import { canaryIds } from "../sweep/stages/reset-cache.ts";
import { probeLength } from "../sweep/stages/build-prompts.ts";
import { cacheSlotsOf } from "../sweep/context.ts";
import { streamRequestFor } from "../sweep/request.ts";
import { serializeIds } from "../workload/prompts.ts";
import type { MultiturnContext } from "./context.ts";

export interface Prepared {
  flushed: boolean;
  /** The canary found 0 cached tokens after the flush; null when not proven (--flush none, --verify-cache off). */
  flushVerified: boolean | null;
  /** The most cached tokens a system-prompt warm request found (0 after a working flush); null: none sent. */
  warmCachedTokens: number | null;
}

export async function prepareCache(ctx: MultiturnContext, systemPrompts: readonly Uint32Array[]): Promise<Prepared> {
  const { opts } = ctx;
  let flushed = false;
  let flushVerified: boolean | null = null;
  if (opts.flush !== "none") {
    const prove = opts.verifyCache !== "off";
    const canary = canaryIds(ctx.server.pageSize, probeLength(ctx.server.pageSize), ctx.tokenizer.population);
    if (prove) await sendShort(canary, ctx, "the flush check");
    log.info("Flushing KV cache ...");
    await ctx.backend.flush(ctx.ctl, { deadlineS: opts.flushDeadlineS, serverTimeoutS: opts.flushServerTimeoutS });
    flushed = true;
    if (prove) {
      const probe = await sendShort(canary, ctx, "the flush check");
      flushVerified = probe.ok && probe.cachedTokens >= 0 ? probe.cachedTokens === 0 : null;
    }
    if (opts.settleMs > 0) await sleepUnlessInterrupted(opts.settleMs, ctx.io.signal, "while settling after the flush");
  }
  let warmCachedTokens: number | null = null;
  if (systemPrompts.length > 0) {
    log.info(`Warming ${systemPrompts.length} system prompt(s) of ${systemPrompts[0]?.length} tokens ...`);
    for (const { ids, slot } of warmsOf(systemPrompts, cacheSlotsOf(ctx))) {
      const rec = await sendShort(ids, ctx, "the system-prompt warm", opts.extraRequestBody, slot);
      if (!rec.ok) throw new BenchError(`Warming the system prompt failed: ${rec.failureKind}: ${rec.failureMessage}`);
      warmCachedTokens = Math.max(warmCachedTokens ?? -1, rec.cachedTokens);
    }
  }
  return { flushed, flushVerified, warmCachedTokens };
}

/**
 * Each system prompt once; on a server with one cache per slot (llama.cpp), where a prompt hits only in the slot it
 * lands on, every slot too (slot i gets prompt i mod K), as the sweep warms each slot: concurrent first turns then
 * find their system prompt whichever slot takes them.
 */
function warmsOf(systemPrompts: readonly Uint32Array[], slots: ReadonlyArray<number | null>): Array<{ ids: Uint32Array; slot: number | null }> {
  const n = slots[0] === null ? systemPrompts.length : Math.max(slots.length, systemPrompts.length);
  return Array.from({ length: n }, (_, i) => ({ ids: systemPrompts[i % systemPrompts.length] as Uint32Array, slot: slots[i % slots.length] ?? null }));
}

async function sendShort(ids: Uint32Array, ctx: MultiturnContext, what: string, extra: Record<string, unknown> = {}, slot: number | null = null): Promise<RequestRecord> {
  const template = ctx.backend.createBodyTemplate({ maxNewTokens: 1, ignoreEos: true, extra, model: ctx.server.model, slot });
  const body = bodyParts(template, serializeIds(ids), new Uint8Array(0));
  const rec = await streamRequest(streamRequestFor(ctx, body, { index: -2, promptLen: ids.length, maxNewTokens: 1 }));
  if (rec.failureKind === "cancelled") throw interruptedError(`during ${what}`);
  return rec;
}
