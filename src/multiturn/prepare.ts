/**
 * Before round 0: the engine's reset (empty the server's cache and prove it: a canary cached before the flush must
 * find nothing after it, as the sweep proves each flush; settle), then the engine's warm of each system prompt of
 * the working set (one output token), so round 0's turns can hit it.
 */
import { onReplica, type ReplicaSet } from "../engine/replica-set.ts";
import { log } from "../log.ts";
import { bodyParts } from "../backends/body.ts";
import { cacheSlotsOf, probeLength, resetCache } from "../engine/reset-cache.ts";
import { warm } from "../engine/warm.ts";
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
  const { opts, server } = ctx;
  const reset = await resetCache(ctx, {
    probeIds: null,
    canaryMaxTokens: probeLength(server.pageSize),
    // Turns are not pinned to a cache slot: neither are the canary and its probe.
    slots: [null],
    prefixes: [],
    prefixLen: 0,
    learnTemplateHead: false,
    label: "before round 0",
  });
  const slots = cacheSlotsOf(server);
  // One cache per slot (llama.cpp): a conversation's history stays cached only while no other conversation takes
  // its slot, so more conversations than slots evict each other and later turns miss (measured on the mock).
  if (slots[0] !== null && opts.numClients > slots.length) {
    log.warn(
      `${opts.numClients} conversations share ${slots.length} cache slot(s): they evict each other's history between turns; use --num-clients <= ${slots.length} (or start the server with more slots, -np) for a cache study`,
    );
  }
  const found = reset.probeCachedTokens;
  const flushVerified = found === null || found < 0 ? null : found === 0;
  if (systemPrompts.length > 0) log.info(`Warming ${systemPrompts.length} system prompt(s) of ${systemPrompts[0]?.length} tokens ...`);
  const template = (slot: number | null) =>
    ctx.backend.createBodyTemplate({ maxNewTokens: 1, ignoreEos: true, extra: opts.extraRequestBody, model: server.model, slot });
  const requests = warmsOf(systemPrompts, slots).map(({ ids, slot }) => ({
    body: bodyParts(template(slot), serializeIds(ids), new Uint8Array(0)),
    promptLen: ids.length,
  }));
  const warmed = await warm(ctx, requests, {
    during: "during the system-prompt warm",
    failed: (why) => `Warming the system prompt failed: ${why}`,
  });
  return { flushed: reset.flushed, flushVerified, warmCachedTokens: warmed.cachedTokens };
}

/**
 * Each system prompt once; on a server with one cache per slot (llama.cpp), where a prompt hits only in the slot it
 * lands on, every slot too (slot i gets prompt i mod K), as the sweep warms each slot: concurrent first turns then
 * find their system prompt whichever slot takes them.
 */
function warmsOf(systemPrompts: readonly Uint32Array[], slots: ReadonlyArray<number | null>): Array<{ ids: Uint32Array; slot: number | null }> {
  if (systemPrompts.length === 0) return [];
  const n = slots[0] === null ? systemPrompts.length : Math.max(slots.length, systemPrompts.length);
  return Array.from({ length: n }, (_, i) => ({ ids: systemPrompts[i % systemPrompts.length] as Uint32Array, slot: slots[i % slots.length] ?? null }));
}

/**
 * Several replicas: each flushed and proven on its own, and warmed with every system prompt (a conversation may be
 * sent anywhere); proven only where every replica's flush was.
 */
export async function prepareReplicaCaches(ctx: MultiturnContext, set: ReplicaSet, systemPrompts: readonly Uint32Array[]): Promise<Prepared> {
  const each: Prepared[] = [];
  for (let r = 0; r < set.urls.length; r++) each.push(await prepareCache(onReplica(ctx, set, r), systemPrompts));
  const proofs = each.map((p) => p.flushVerified);
  const found = each.map((p) => p.warmCachedTokens);
  return {
    flushed: each.every((p) => p.flushed),
    flushVerified: proofs.includes(false) ? false : proofs.includes(null) ? null : true,
    warmCachedTokens: found.every((c) => c === null) ? null : Math.max(...found.map((c) => c ?? -1)),
  };
}
