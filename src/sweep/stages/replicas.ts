/**
 * Stage: what the cache model reads of a line - every prompt as segments (its prefix group's prefix, shared by the
 * group's prompts, then a suffix of its own), what each server held before the first send (its warm) - and, with
 * several replicas (--base-url A,B,...), the line's warm, routing and hit-loss ledger across them. The reset (each
 * replica flushed and proven empty on its own) is the engine's (engine/replica-set.ts); each prefix is then warmed
 * where the line's router (engine/replica-router.ts) first sends it (--warm-replicas all: on every replica), and each
 * measured request goes where the router sends it.
 */
import { ReplicaRouter, type RouteKeys } from "../../engine/replica-router.ts";
import type { WarmResult } from "../../engine/warm.ts";
import { UNKNOWN_BEHAVIOUR } from "../../config/cache-behaviour.ts";
import type { CacheSequence } from "../../metrics/cache-model.ts";
import { hitLedger, ledgerTermsJson, type HitLedger } from "../../metrics/hit-ledger.ts";
import { expectPoint, modelCapacityOf, type RequestExpectation } from "../../metrics/point-expectations.ts";
import type { RequestRecord } from "../../schema/record.ts";
import type { SweepContext } from "../context.ts";
import { onReplica, type ReplicaSet } from "../../engine/replica-set.ts";
import type { CellPlan } from "../plan.ts";
import type { PromptBatch } from "./build-prompts.ts";
import { warmCell } from "./warm-cell.ts";

/** The prefix group of prompt `index` (in rotation, or routed: in a seeded random order). */
const groupOf = (plan: CellPlan, index: number): number => plan.groupOf(index);
/** Each group's first prompt (where a spreading route first sends it), found once per plan. */
const firstPrompts = new WeakMap<CellPlan, Map<number, number>>();
function firstOfGroup(plan: CellPlan, group: number): number {
  let first = firstPrompts.get(plan);
  if (first === undefined) {
    first = new Map();
    for (let i = plan.numPrompts - 1; i >= 0; i--) first.set(plan.groupOf(i), i);
    firstPrompts.set(plan, first);
  }
  return first.get(group) ?? group;
}

/** Each replica warmed with the prefixes the router first sends it, in the working set's order. */
export async function warmReplicas(plan: CellPlan, batch: PromptBatch, ctx: SweepContext, replicas: ReplicaSet, router: ReplicaRouter): Promise<WarmResult> {
  const warms: WarmResult[] = [];
  for (let r = 0; r < replicas.urls.length; r++) {
    const mine = warmedGroups(plan, router, r, ctx.opts.warmReplicas === "all");
    if (mine.length === 0) continue;
    warms.push(await warmCell(plan, batch, onReplica(ctx, replicas, r), mine));
  }
  if (warms.length === 0) return { cachedTokens: null, requests: 0 };
  const found = warms.map((w) => w.cachedTokens);
  return { cachedTokens: found.every((c) => c === null) ? null : Math.max(...found.map((c) => c ?? -1)), requests: warms.reduce((a, w) => a + w.requests, 0) };
}

/** The working set's prefixes replica r is warmed with (none when the prefix is empty). */
function warmedGroups(plan: CellPlan, router: ReplicaRouter, r: number, all: boolean): number[] {
  if (plan.prefixLen === 0) return [];
  return Array.from({ length: plan.workingSet }, (_, g) => g).filter((g) => router.warmsOn(g, all).includes(r));
}

/** Whether the prompts of one prefix share at least a page of it (else routing on it means nothing). */
const sharesAPage = (plan: CellPlan, pageSize: number): boolean => plan.prefixLen >= pageSize;

/** The line's router: keys by prefix group; the oracle's model starts with every prefix where it was warmed. */
export function lineRouter(plan: CellPlan, ctx: SweepContext, replicas: ReplicaSet): ReplicaRouter {
  const page = ctx.server.pageSize;
  const shared = sharesAPage(plan, page);
  const keysOf = (index: number): RouteKeys => {
    const group = groupOf(plan, index);
    return { session: group, prefix: shared ? group : null };
  };
  return new ReplicaRouter(replicas.urls, ctx.opts.replicas!.route, keysOf, {
    seed: ctx.opts.seed,
    via: ctx.opts.replicas!.via,
    prefixes: shared ? Array.from({ length: plan.workingSet }, (_, g) => g) : [],
    prefixesHeld: replicas.servers.map((s) =>
      s.info.cacheCapacityTokens === null || plan.prefixLen === 0 ? null : Math.floor(s.info.cacheCapacityTokens / plan.prefixLen),
    ),
    warmedEverywhere: ctx.opts.warmReplicas === "all",
    firstIndexOf: (g) => firstOfGroup(plan, g),
  });
}

/** Segment ids: a group's prefix, then a prompt's own suffix (ids never shared across prompts). */
const SHARED_BASE = 1;
const OWN_BASE = 2 ** 30;

/** A sweep prompt as the model reads it: its group's prefix (where it has one), then a suffix of its own. */
function sweepSequence(plan: CellPlan, index: number): CacheSequence {
  if (plan.prefixLen === 0) return { hashIds: [OWN_BASE + index], ends: [plan.promptLen], length: plan.promptLen };
  return { hashIds: [SHARED_BASE + groupOf(plan, index), OWN_BASE + index], ends: [plan.prefixLen, plan.promptLen], length: plan.promptLen };
}

const warmSequence = (plan: CellPlan, group: number): CacheSequence => ({ hashIds: [SHARED_BASE + group], ends: [plan.prefixLen], length: plan.prefixLen });

/** What the flush's proof left in the cache: a probe sharing nothing with any prompt (before the warm). */
const probeSequence = (length: number): CacheSequence => ({ hashIds: [OWN_BASE - 1], ends: [length], length });

/** What the line's servers held before the first send: the flush probe (when one was sent), then each warmed prefix in order. */
function priorOf(plan: CellPlan, groups: readonly number[], probeLen: number | null): CacheSequence[] {
  const probe = probeLen === null ? [] : [probeSequence(probeLen)];
  return [...probe, ...(plan.prefixLen === 0 ? [] : groups.map((g) => warmSequence(plan, g)))];
}

/**
 * Every measured request's expected cached range, from the one cache model, on the server that served it (one server:
 * every prefix warmed on it). Null where the model does not apply: a server with a cache per slot (llama.cpp), whose
 * slots the engine pins and proves instead.
 */
export function lineExpectations(
  plan: CellPlan,
  records: readonly RequestRecord[],
  ctx: SweepContext,
  probeLen: number | null,
  router?: ReplicaRouter,
): Map<number, RequestExpectation> | null {
  if (ctx.server.cacheSlots !== null && ctx.server.cacheSlots !== undefined) return null;
  const replicas = ctx.replicas;
  const everyGroup = Array.from({ length: plan.workingSet }, (_, g) => g);
  const servers =
    replicas === undefined || router === undefined
      ? [{ capacityTokens: modelCapacityOf(ctx.server.info), prior: priorOf(plan, everyGroup, probeLen) }]
      : replicas.urls.map((_, r) => ({
          capacityTokens: modelCapacityOf(replicas.servers[r]!.info),
          prior: priorOf(plan, warmedGroups(plan, router, r, ctx.opts.warmReplicas === "all"), probeLen),
        }));
  return expectPoint({
    sequenceOf: (index) => sweepSequence(plan, index),
    records,
    serverOf: (index) => (router === undefined ? 0 : (router.assigned.get(index) ?? null)),
    servers,
    pageSize: ctx.server.pageSize,
    blockSize: ctx.server.pageSize,
    behaviour: ctx.opts.serverCache ?? UNKNOWN_BEHAVIOUR,
  });
}

export function lineLedger(
  plan: CellPlan,
  records: readonly RequestRecord[],
  router: ReplicaRouter,
  ctx: SweepContext,
  replicas: ReplicaSet,
  probeLen: number | null,
): HitLedger {
  const shared = sharesAPage(plan, ctx.server.pageSize);
  return hitLedger({
    sequenceOf: (index) => sweepSequence(plan, index),
    records,
    replicaOf: (index) => router.assigned.get(index) ?? null,
    homeKeyOf: (index) => (shared ? groupOf(plan, index) : null),
    replicas: replicas.urls.map((url, r) => ({
      url,
      capacityTokens: modelCapacityOf(replicas.servers[r]!.info),
      warmed: priorOf(plan, warmedGroups(plan, router, r, ctx.opts.warmReplicas === "all"), probeLen),
    })),
    pageSize: ctx.server.pageSize,
    behaviour: ctx.opts.serverCache ?? UNKNOWN_BEHAVIOUR,
  });
}

/**
 * What each request's details add (--request-details): its range from the cache model, and with several replicas
 * where it went, its prefix group and its ledger terms. Undefined where there is nothing to add.
 */
export function lineDetails(
  plan: CellPlan,
  ranges: ReadonlyMap<number, RequestExpectation> | null,
  ledger: HitLedger | null,
  router: ReplicaRouter | undefined,
  replicas: ReplicaSet | undefined,
): ((index: number) => Record<string, unknown>) | undefined {
  if (ranges === null && ledger === null) return undefined;
  return (index) => {
    const x = ranges?.get(index);
    const range = x === undefined ? {} : { expected_cached_tokens_lower: x.guaranteed, expected_cached_tokens_upper: x.possible };
    if (ledger === null || router === undefined || replicas === undefined) return range;
    const replica = router.assigned.get(index);
    const terms = ledger.perRequest.get(index);
    return {
      ...range,
      replica: replica ?? null,
      replica_url: replica === undefined ? null : replicas.urls[replica]!,
      prefix_group: plan.prefixLen === 0 ? null : plan.groupOf(index),
      ledger: terms === undefined ? null : ledgerTermsJson(terms),
    };
  };
}
