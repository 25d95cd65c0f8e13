/**
 * The engine's reset: empty the server's prefix cache (the backend's flush), prove it with short requests, and let the server
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
 * Producers say what the reset must keep clear of (the prefixes they warm next) and which sequence to probe with;
 * the probe to use next time comes back in the result, so no run state is mutated here.
 *
 * Text prompts (chat) also learn the server's chat-template head here: every chat prompt shares it, so a second
 * short prompt sent after the probe finds exactly that many tokens cached.
 */
import { log } from "../log.ts";
import { sleepUnlessInterrupted } from "../interrupt.ts";
import { bodyParts, serializeText } from "../backends/body.ts";
import type { ServerProfile } from "../backends/types.ts";
import type { RunOptions } from "../config/options.ts";
import type { RequestRecord } from "../schema/record.ts";
import { PyRandom } from "../workload/rng.ts";
import { serializeIds } from "../workload/prompts.ts";
import type { LoadedTokenizer } from "../workload/tokenizer.ts";
import { sendControl, type RequestContext } from "./request.ts";

/** What the reset needs of its run. */
export interface ResetContext extends RequestContext {
  opts: RequestContext["opts"] & Pick<RunOptions, "flush" | "verifyCache" | "flushDeadlineS" | "flushServerTimeoutS" | "settleMs">;
  server: Pick<ServerProfile, "textMode" | "pageSize" | "flushGap" | "cacheSlots" | "model">;
  tokenizer: Pick<LoadedTokenizer, "population" | "decode">;
}

/** What the producer asks of one reset. */
export interface ResetInput {
  /** A sequence the server has cached, to probe after the flush; null: a canary is sent (and cached) first. */
  probeIds: Uint32Array | null;
  /** The canary's length at most (the prompts' length: it must fit where they fit). */
  canaryMaxTokens: number;
  /** The cache slots to prove (cacheSlotsOf(server), or [null] for requests that are not pinned). */
  slots: readonly (number | null)[];
  /** What is warmed and measured next: a probe whose first page is one of these prefixes is not sent. */
  prefixes: readonly Uint32Array[];
  prefixLen: number;
  /** Text prompts: after a proven flush, learn the chat template's head (every chat prompt shares it). */
  learnTemplateHead: boolean;
  /** Names the line in warnings ("50%", "round 0"). */
  label: string;
}

/** What the reset did and proved. */
export interface CacheReset {
  flushed: boolean;
  /** Flush calls made (retries of a busy server included). */
  attempts: number;
  /** Cached tokens the probe found after the flush (0 proves it; the most over every slot); -1: the server did not say; null: no probe. */
  probeCachedTokens: number | null;
  /** Why this flush cannot have made the server cold, whatever the probe found (ServerProfile.flushGap); null: none known. */
  flushGap: string | null;
  /** The sequence this reset probed with (the canary when one was sent): the input's when nothing was sent. */
  probeIds: Uint32Array | null;
  /** Tokens of the chat template's head, when learned by this reset; null otherwise. */
  templateHeadTokens: number | null;
}

/** Seed of the first line's canary prompt, and of the chat-template probe. */
const CANARY_SEED = 0x5eed_ca9a2n;
const TEMPLATE_PROBE_SEED = 0x5eed_7e4a1n;

/** The cache slots a warm or a flush proof must cover: each of a per-slot server's, or [null] for one shared cache. */
export function cacheSlotsOf(server: Pick<ServerProfile, "cacheSlots">): Array<number | null> {
  const n = server.cacheSlots ?? null;
  return n === null ? [null] : Array.from({ length: n }, (_, i) => i);
}

/** Long enough to fill 4 pages (and at least 64 tokens), so a surviving cache shows as whole pages. */
export const probeLength = (pageSize: number): number => Math.max(65, 4 * pageSize + 1);

export async function resetCache(ctx: ResetContext, input: ResetInput): Promise<CacheReset> {
  const { opts } = ctx;
  if (opts.flush === "none")
    return { flushed: false, attempts: 0, probeCachedTokens: null, flushGap: null, probeIds: input.probeIds, templateHeadTokens: null };
  const prove = opts.verifyCache !== "off";
  let probeIds = input.probeIds;
  if (prove && probeIds === null) probeIds = await sendCanary(ctx, input);

  log.info("Flushing KV cache ...");
  const { attempts } = await ctx.backend.flush(ctx.ctl, { deadlineS: opts.flushDeadlineS, serverTimeoutS: opts.flushServerTimeoutS });
  const probeCachedTokens = prove ? await probe(probeIds, input, ctx) : null;
  const templateHeadTokens = probeCachedTokens === 0 && input.learnTemplateHead ? await learnTemplateHead(ctx, input) : null;
  if (opts.settleMs > 0) await sleepUnlessInterrupted(opts.settleMs, ctx.io.signal, "while settling after the flush");
  return { flushed: true, attempts, probeCachedTokens, flushGap: ctx.server.flushGap ?? null, probeIds, templateHeadTokens };
}

/** The canary prompt: its own RNG, so no run's draw order is touched. */
export function canaryIds(pageSize: number, maxLength: number, population: Uint32Array): Uint32Array {
  const ids = new Uint32Array(Math.min(probeLength(pageSize), maxLength));
  new PyRandom(CANARY_SEED).choicesInto(population, ids, 0, ids.length);
  return ids;
}

/** Sends the canary (to every cache slot) and returns its ids; it is now cached, so the flush has something to prove. */
async function sendCanary(ctx: ResetContext, input: ResetInput): Promise<Uint32Array> {
  const ids = canaryIds(ctx.server.pageSize, input.canaryMaxTokens, ctx.tokenizer.population);
  for (const slot of input.slots) await sendShort(ids, ctx, slot);
  return ids;
}

/**
 * Re-sends the remembered sequence (to every cache slot); returns the most cached tokens any found (-1 when a
 * probe failed or went unreported and none found any), or null when it could not be a fair probe.
 */
async function probe(ids: Uint32Array | null, input: ResetInput, ctx: ResetContext): Promise<number | null> {
  if (ids === null) return null;
  // The probe stays cached for this line. If its first page were also the shared prefix's first page, the warm and
  // measured requests would hit it: probe nothing rather than disturb what is measured.
  const page = Math.min(ctx.server.pageSize, ids.length);
  if (input.prefixLen >= page && input.prefixes.some((prefix) => samePrefix(ids, prefix, page))) {
    log.debug("flush probe skipped: its first page equals this line's shared prefix");
    return null;
  }
  let found = -1;
  for (const slot of input.slots) {
    const rec = await sendShort(ids, ctx, slot);
    if (!rec.ok) {
      log.warn(`flush check (${input.label}${slot === null ? "" : `, slot ${slot}`}): the probe request failed (${rec.failureKind}: ${rec.failureMessage})`);
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
async function learnTemplateHead(ctx: ResetContext, input: ResetInput): Promise<number | null> {
  const ids = new Uint32Array(Math.min(probeLength(ctx.server.pageSize), input.canaryMaxTokens));
  new PyRandom(TEMPLATE_PROBE_SEED).choicesInto(ctx.tokenizer.population, ids, 0, ids.length);
  const rec = await sendShort(ids, ctx, input.slots[0] ?? null);
  const head = rec.ok && rec.cachedTokens >= 0 ? rec.cachedTokens : null;
  log.debug(`chat template head: ${head ?? "not learned"} tokens`);
  return head;
}

/** One prompt part (a probe's or a canary's ids) as the backend takes it: the ids, or the text they decode to. */
function promptPart(ids: Uint32Array, ctx: Pick<ResetContext, "backend" | "tokenizer">): Uint8Array {
  return ctx.backend.promptEncoding === "text" ? serializeText(ctx.tokenizer.decode(ids)) : serializeIds(ids);
}

function sendShort(ids: Uint32Array, ctx: ResetContext, slot: number | null): Promise<RequestRecord> {
  const template = ctx.backend.createBodyTemplate({ maxNewTokens: 1, ignoreEos: true, extra: {}, model: ctx.server.model, slot });
  const body = bodyParts(template, promptPart(ids, ctx), new Uint8Array(0));
  return sendControl(ctx, body, { index: -2, promptLen: ids.length }, "during the flush check");
}

function samePrefix(a: Uint32Array, b: Uint32Array, n: number): boolean {
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * After a line: the next reset's probe. The start of the prompt that finished last (the most recently used pages)
 * replaces the current one; the current one is kept when no request succeeded. When the next line sends the same
 * prompts again (another rate of the cell), none of them may be the probe: null, so the next flush is proven with
 * the canary instead.
 */
export function nextProbe(
  current: Uint32Array | null,
  lastFinishedProbeIds: Uint32Array | null,
  nextLineResends: boolean,
  opts: Pick<RunOptions, "flush" | "verifyCache">,
): Uint32Array | null {
  if (opts.flush === "none" || opts.verifyCache === "off") return current;
  if (nextLineResends) return null;
  return lastFinishedProbeIds ?? current;
}
