/**
 * Before round 0, as the engine's reset and warm (engine/run-point.ts preparePoint): empty the server's cache (every
 * server's, each on its own) and prove it - a canary cached before the flush must find nothing after it, as the
 * sweep proves each flush - settle, then warm each system prompt of the working set (one output token) on every
 * server, so round 0's turns can hit it wherever they are sent.
 */
import { log } from "../log.ts";
import { bodyParts } from "../backends/body.ts";
import type { WarmPlan } from "../engine/point-plan.ts";
import type { EngineSession } from "../engine/open-session.ts";
import type { MultiturnOptions } from "../config/options.ts";
import { cacheSlotsOf, probeLength } from "../engine/reset-cache.ts";
import { serializeIds } from "../workload/prompts.ts";
import type { MultiturnContext } from "./context.ts";

export interface Prepared {
  flushed: boolean;
  /** The canary found 0 cached tokens after the flush; null when not proven (--flush none, --verify-cache off). */
  flushVerified: boolean | null;
  /** What the canary found cached after the flush (0 proves it); null: not probed, -1 unknown. */
  flushProbeCachedTokens: number | null;
  /** The most cached tokens a system-prompt warm request found (0 after a working flush); null: none sent. */
  warmCachedTokens: number | null;
}

export async function prepareCache(session: EngineSession<MultiturnOptions>, ctx: MultiturnContext, systemPrompts: readonly Uint32Array[]): Promise<Prepared> {
  const { opts, server } = ctx;
  const slots = cacheSlotsOf(server);
  // One cache per slot (llama.cpp): a conversation's history stays cached only while no other conversation takes
  // its slot, so more conversations than slots evict each other and later turns miss (measured on the mock).
  if (slots[0] !== null && opts.numClients > slots.length) {
    log.warn(
      `${opts.numClients} conversations share ${slots.length} cache slot(s): they evict each other's history between turns; use --num-clients <= ${slots.length} (or start the server with more slots, -np) for a cache study`,
    );
  }
  const prepared = await session.prepare(
    {
      reset: {
        probeIds: null,
        canaryMaxTokens: probeLength(server.pageSize),
        // Turns are not pinned to a cache slot: neither are the canary and its probe.
        slots: [null],
        prefixes: [],
        prefixLen: 0,
        learnTemplateHead: false,
        label: "before round 0",
      },
      warm: systemPromptWarm(ctx, systemPrompts),
    },
    ctx.router,
    { signal: ctx.io.signal },
  );
  const found = prepared.reset.probeCachedTokens;
  return {
    flushed: prepared.reset.flushed,
    flushVerified: found === null || found < 0 ? null : found === 0,
    flushProbeCachedTokens: found,
    warmCachedTokens: prepared.warm.cachedTokens,
  };
}

/**
 * Each system prompt once; on a server with one cache per slot (llama.cpp), where a prompt hits only in the slot it
 * lands on, every slot too (slot i gets prompt i mod K), as the sweep warms each slot: concurrent first turns then
 * find their system prompt whichever slot takes them.
 */
function systemPromptWarm(ctx: MultiturnContext, systemPrompts: readonly Uint32Array[]): WarmPlan | null {
  if (systemPrompts.length === 0) return null;
  const { opts, server } = ctx;
  const template = (slot: number | null) =>
    ctx.backend.createBodyTemplate({ maxNewTokens: 1, ignoreEos: true, extra: opts.extraRequestBody, model: server.model, slot });
  return {
    groups: systemPrompts.length,
    everywhere: true,
    requestsOf: (groups, slots) => {
      const n = slots[0] === null ? groups.length : Math.max(slots.length, groups.length);
      return Array.from({ length: n }, (_, i) => {
        const ids = systemPrompts[groups[i % groups.length]!]!;
        return { body: bodyParts(template(slots[i % slots.length] ?? null), serializeIds(ids), new Uint8Array(0)), promptLen: ids.length };
      });
    },
    announce: (groups) => `Warming ${groups} system prompt(s) of ${systemPrompts[0]?.length} tokens ...`,
    say: { during: "during the system-prompt warm", failed: (why) => `Warming the system prompt failed: ${why}` },
  };
}
