/**
 * Stage (several replicas, --base-url A,B,...): each line's warm, routing and hit-loss ledger across them. The
 * reset (each replica flushed and proven empty on its own) is the engine's (engine/replica-set.ts); each replica is
 * then warmed with the prefixes its router may send it, and each measured request goes where the line's router
 * (engine/replica-router.ts) sends it. The sweep's
 * prompts are a prefix of its working set plus a suffix of their own, so as pages they are: the prefix's whole pages
 * (shared by the prompts of that prefix), then pages no other prompt has - what the ledger (metrics/hit-ledger.ts)
 * reads.
 */
import { ReplicaRouter, type RouteKeys } from "../../engine/replica-router.ts";
import type { WarmResult } from "../../engine/warm.ts";
import type { BlockPrompt } from "../../metrics/block-prompt.ts";
import { hitLedger, type HitLedger } from "../../metrics/hit-ledger.ts";
import type { RequestRecord } from "../../schema/record.ts";
import type { SweepContext } from "../context.ts";
import { onReplica, type ReplicaSet } from "../../engine/replica-set.ts";
import type { PctPlan } from "../plan.ts";
import type { PromptBatch } from "./build-prompts.ts";
import { warmCell } from "./warm-cell.ts";

/** Each replica warmed with the prefixes the router may send it (router.warmsOn), in the working set's order. */
export async function warmReplicas(plan: PctPlan, batch: PromptBatch, ctx: SweepContext, replicas: ReplicaSet, router: ReplicaRouter): Promise<WarmResult> {
  const warms: WarmResult[] = [];
  for (let r = 0; r < replicas.urls.length; r++) {
    const mine = warmedGroups(plan, router, r);
    if (mine.length === 0) continue;
    warms.push(await warmCell(plan, batch, onReplica(ctx, replicas, r), mine));
  }
  if (warms.length === 0) return { cachedTokens: null, requests: 0 };
  const found = warms.map((w) => w.cachedTokens);
  return { cachedTokens: found.every((c) => c === null) ? null : Math.max(...found.map((c) => c ?? -1)), requests: warms.reduce((a, w) => a + w.requests, 0) };
}

/** The working set's prefixes replica r is warmed with (none when the prefix is empty). */
function warmedGroups(plan: PctPlan, router: ReplicaRouter, r: number): number[] {
  if (plan.prefixLen === 0) return [];
  return Array.from({ length: plan.workingSet }, (_, g) => g).filter((g) => router.warmsOn(g).includes(r));
}

/** Whether the prompts of one prefix share at least a page of it (else routing on it means nothing). */
const sharesAPage = (plan: PctPlan, pageSize: number): boolean => plan.prefixLen >= pageSize;

/** The line's router: keys by prefix group; the oracle's model starts with every prefix warmed on every replica. */
export function lineRouter(plan: PctPlan, ctx: SweepContext, replicas: ReplicaSet): ReplicaRouter {
  const page = ctx.server.pageSize;
  const shared = sharesAPage(plan, page);
  const keysOf = (index: number): RouteKeys => {
    const group = index % plan.workingSet;
    return { session: group, prefix: shared ? group : null };
  };
  return new ReplicaRouter(replicas.urls, ctx.opts.replicas!.route, keysOf, {
    seed: ctx.opts.seed,
    via: ctx.opts.replicas!.via,
    prefixes: shared ? Array.from({ length: plan.workingSet }, (_, g) => g) : [],
    prefixesHeld: replicas.servers.map((s) =>
      s.info.cacheCapacityTokens === null || plan.prefixLen === 0 ? null : Math.floor(s.info.cacheCapacityTokens / plan.prefixLen),
    ),
  });
}

/** Hash ids of a sweep prompt's pages: group g's whole prefix pages, then pages of its own. */
const SHARED_BASE = 1;
const OWN_BASE = 2 ** 40;

function sweepPrompt(index: number, group: number | null, inputLength: number, prefixLen: number, page: number): BlockPrompt {
  const pages = Math.ceil(inputLength / page);
  const sharedPages = group === null ? 0 : Math.floor(prefixLen / page);
  const hashIds = Array.from({ length: pages }, (_, k) => (k < sharedPages ? SHARED_BASE + group! * 1_000_003 + k : OWN_BASE + index * 1_000_003 + k));
  return { index, inputLength, outputLength: 1, hashIds };
}

/** Warm prompts get indices no request has. */
const WARM_INDEX = 1e9;

export function lineLedger(plan: PctPlan, records: readonly RequestRecord[], router: ReplicaRouter, ctx: SweepContext, replicas: ReplicaSet): HitLedger {
  const page = ctx.server.pageSize;
  const prompts: BlockPrompt[] = [];
  for (const r of records)
    prompts[r.index] = { ...sweepPrompt(r.index, r.index % plan.workingSet, plan.promptLen, plan.prefixLen, page), outputLength: ctx.opts.outputLen };
  const warmPrompt = (g: number) => sweepPrompt(WARM_INDEX + g, g, plan.prefixLen, plan.prefixLen, page);
  return hitLedger({
    prompts,
    records,
    replicaOf: (index) => router.assigned.get(index) ?? null,
    replicas: replicas.urls.map((url, r) => ({
      url,
      capacityTokens: replicas.servers[r]!.info.cacheCapacityTokens,
      warmed: warmedGroups(plan, router, r).map(warmPrompt),
    })),
    pageSize: page,
  });
}
