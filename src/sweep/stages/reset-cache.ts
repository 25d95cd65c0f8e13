/**
 * Stage: empty the server's prefix cache (the backend's flush), prove it with short requests, and let the server
 * settle - as the script's flush + sleep(1), with exactly one flush per line (per pct, and per request rate within
 * a pct: every rate then meets the same empty cache and resends the same prompts).
 *
 * The proof: a sequence the server cached before the flush must come back with 0 cached tokens after it. Between
 * pcts that sequence is the start of the previous pct's most recently finished prompt (its pages are the least
 * likely to have been evicted). The first pct has none, and between the lines of one pct (one per request rate)
 * that prompt is sent again, so it cannot be the probe: then a canary prompt (its own RNG: the script's draw order
 * is untouched) is sent just before the flush. A flush that answers "done" proves nothing by itself: old SGLang
 * always said so, and a buggy server may too. A server with one cache per slot (llama.cpp) gets the canary and
 * the probe on every slot, pinned, so that each slot's cache is proven empty; what the flush cannot reach at all
 * (found at preflight: ServerProfile.flushGap) leaves every pct unproven.
 *
 * Text prompts (chat) also learn the server's chat-template head here: every chat prompt shares it, so a second
 * short prompt sent after the probe finds exactly that many tokens cached.
 */
import { log } from "../../log.ts";
import { interruptedError, sleepUnlessInterrupted } from "../../interrupt.ts";
import { bodyParts } from "../../backends/body.ts";
import { streamRequest } from "../../client/stream.ts";
import type { RequestRecord } from "../../schema/record.ts";
import { PyRandom } from "../../workload/rng.ts";
import { cacheSlotsOf, type SweepContext } from "../context.ts";
import type { PctPlan } from "../plan.ts";
import { streamRequestFor } from "../request.ts";
import { probeLength, promptPart, type PromptBatch } from "./build-prompts.ts";

/** What the reset did and proved. */
export interface CacheReset {
  flushed: boolean;
  /** Flush calls made (retries of a busy server included). */
  attempts: number;
  /** Cached tokens the probe found after the flush (0 proves it; the most over every slot); -1: the server did not say; null: no probe. */
  probeCachedTokens: number | null;
  /** Why this flush cannot have made the server cold, whatever the probe found (ServerProfile.flushGap); null: none known. */
  flushGap: string | null;
}

/** Seed of the first pct's canary prompt, and of the chat-template probe. */
const CANARY_SEED = 0x5eed_ca9a2n;
const TEMPLATE_PROBE_SEED = 0x5eed_7e4a1n;

export async function resetCache(plan: PctPlan, batch: PromptBatch, ctx: SweepContext): Promise<CacheReset> {
  const { opts } = ctx;
  if (opts.flush === "none") return { flushed: false, attempts: 0, probeCachedTokens: null, flushGap: null };
  const prove = opts.verifyCache !== "off";
  if (prove && ctx.state.probeIds === null) ctx.state.probeIds = await sendCanary(ctx);

  log.info("Flushing KV cache ...");
  const { attempts } = await ctx.backend.flush(ctx.ctl, { deadlineS: opts.flushDeadlineS, serverTimeoutS: opts.flushServerTimeoutS });
  const probeCachedTokens = prove ? await probe(plan, batch, ctx) : null;
  if (probeCachedTokens === 0 && batch.text !== null) await learnTemplateHead(ctx);
  if (opts.settleMs > 0) await sleepUnlessInterrupted(opts.settleMs, ctx.io.signal, "while settling after the flush");
  return { flushed: true, attempts, probeCachedTokens, flushGap: ctx.server.flushGap ?? null };
}

/** The canary prompt: its own RNG, so no run's draw order is touched. */
export function canaryIds(pageSize: number, maxLength: number, population: Uint32Array): Uint32Array {
  const ids = new Uint32Array(Math.min(probeLength(pageSize), maxLength));
  new PyRandom(CANARY_SEED).choicesInto(population, ids, 0, ids.length);
  return ids;
}

/** Sends the canary (to every cache slot) and returns its ids; it is now cached, so the first flush has something to prove. */
async function sendCanary(ctx: SweepContext): Promise<Uint32Array> {
  const ids = canaryIds(ctx.server.pageSize, ctx.opts.totalTokens, ctx.tokenizer.population);
  for (const slot of cacheSlotsOf(ctx)) await sendShort(ids, ctx, slot);
  return ids;
}

/**
 * Re-sends the remembered sequence (to every cache slot); returns the most cached tokens any found (-1 when a
 * probe failed or went unreported and none found any), or null when it could not be a fair probe.
 */
async function probe(plan: PctPlan, batch: PromptBatch, ctx: SweepContext): Promise<number | null> {
  const ids = ctx.state.probeIds;
  if (ids === null) return null;
  // The probe stays cached for this pct. If its first page were also the shared prefix's first page, the warm and
  // measured requests would hit it: probe nothing rather than disturb what is measured.
  const page = Math.min(ctx.server.pageSize, ids.length);
  if (plan.prefixLen >= page && batch.prefixes.some((prefix) => samePrefix(ids, prefix, page))) {
    log.debug("flush probe skipped: its first page equals this pct's shared prefix");
    return null;
  }
  let found = -1;
  for (const slot of cacheSlotsOf(ctx)) {
    const rec = await sendShort(ids, ctx, slot);
    if (!rec.ok) {
      log.warn(`flush check (${plan.pct}%${slot === null ? "" : `, slot ${slot}`}): the probe request failed (${rec.failureKind}: ${rec.failureMessage})`);
      continue;
    }
    found = Math.max(found, rec.cachedTokens);
  }
  return found;
}

/**
 * After a proven flush the cache holds only the probe: a different short text prompt then shares exactly the chat
 * template's head with it. (A paged cache reports it rounded down to whole pages.)
 */
async function learnTemplateHead(ctx: SweepContext): Promise<void> {
  const ids = new Uint32Array(Math.min(probeLength(ctx.server.pageSize), ctx.opts.totalTokens));
  new PyRandom(TEMPLATE_PROBE_SEED).choicesInto(ctx.tokenizer.population, ids, 0, ids.length);
  const rec = await sendShort(ids, ctx, cacheSlotsOf(ctx)[0] ?? null);
  if (rec.ok && rec.cachedTokens >= 0) ctx.state.templateHeadTokens = rec.cachedTokens;
  log.debug(`chat template head: ${ctx.state.templateHeadTokens} tokens`);
}

async function sendShort(ids: Uint32Array, ctx: SweepContext, slot: number | null): Promise<RequestRecord> {
  const template = ctx.backend.createBodyTemplate({ maxNewTokens: 1, ignoreEos: true, extra: {}, model: ctx.server.model, slot });
  const body = bodyParts(template, promptPart(ids, ctx), new Uint8Array(0));
  const rec = await streamRequest(streamRequestFor(ctx, body, { index: -2, promptLen: ids.length, maxNewTokens: 1 }));
  if (rec.failureKind === "cancelled") throw interruptedError("during the flush check");
  return rec;
}

function samePrefix(a: Uint32Array, b: Uint32Array, n: number): boolean {
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * After a line: remember the start of the prompt that finished last (the most recently used pages), kept by the
 * measurement as requests ended, as the next flush's probe; keep the previous one when no request succeeded. When
 * the next line sends the same prompts again (another rate of this pct), none of them may be the probe: the next
 * flush is proven with the canary instead.
 */
export function rememberProbe(lastFinishedProbeIds: Uint32Array | null, nextLineResends: boolean, ctx: SweepContext): void {
  if (ctx.opts.flush === "none" || ctx.opts.verifyCache === "off") return;
  if (nextLineResends) ctx.state.probeIds = null;
  else if (lastFinishedProbeIds !== null) ctx.state.probeIds = lastFinishedProbeIds;
}
