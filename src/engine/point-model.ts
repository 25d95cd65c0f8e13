/**
 * The engine's cache model of a point: each server (one, or each replica) with its capacity and what it held before
 * the first send - the flush's probe, then each warmed group in the order warmed, on the replicas the route warmed it
 * on - and every measured request's expected cached range on the server that served it (metrics/point-expectations.ts).
 * Producers only say how a request reads (the plan's CacheView); nothing else computes an expectation.
 */
import { modelBehaviour } from "./model-behaviour.ts";
import { expectPoint, modelCapacityOf, type RequestExpectation } from "../metrics/point-expectations.ts";
import type { RequestRecord } from "../schema/record.ts";
import type { PointContext } from "./point-context.ts";
import type { CacheView, ModelledServer } from "./point-plan.ts";
import type { ReplicaRouter } from "./replica-router.ts";

/** Each server as the model sees it; `warmedOn[r]`: the groups warmed on server r, in order; `probeLen`: the probe left cached. */
export function modelledServers(ctx: PointContext, view: CacheView, warmedOn: readonly (readonly number[])[], probeLen: number | null): ModelledServer[] {
  const probe = probeLen === null || view.probeSequenceOf === undefined ? [] : [view.probeSequenceOf(probeLen)];
  const set = ctx.replicas;
  const servers = set === undefined ? [{ url: ctx.opts.baseUrl, server: ctx.server }] : set.urls.map((url, r) => ({ url, server: set.servers[r]! }));
  return servers.map(({ url, server }, r) => {
    const prior = [...(view.prior ?? []), ...probe, ...(warmedOn[r] ?? []).map((g) => view.warmedSequenceOf(g))];
    const slots = server.cacheSlots ?? null;
    // One cache per slot (llama.cpp): the warm and the flush's proof are pinned to every slot in turn, so each slot
    // holds the last of them at the first send (slot-cache-model.ts).
    // A history of rounds is modelled per slot only where the server named every turn's slot and the view knows what
    // each slot held before round 0; else its plan judges it.
    const named = view.history !== undefined && view.history.length > 0 && view.history.every((r) => r.slot !== undefined);
    const pinned =
      slots === null
        ? {}
        : view.history === undefined
          ? { slots: Array.from({ length: slots }, () => prior.at(-1) ?? null) }
          : named && view.slotsHeld !== undefined
            ? { slots: view.slotsHeld(slots) }
            : {};
    return { url, capacityTokens: view.capacityTokens ?? modelCapacityOf(server.info), prior, ...pinned };
  });
}

/** Every request's range on the server that served it (one server: all of them; routed: the router's pick), the point's only. */
export function pointRanges(
  ctx: PointContext,
  view: CacheView,
  records: readonly RequestRecord[],
  servers: readonly ModelledServer[],
  router: ReplicaRouter | undefined,
): Map<number, RequestExpectation> {
  const all = expectPoint({
    sequenceOf: (index) => view.sequenceOf(index),
    finishedOf: view.finishedOf === undefined ? undefined : (index) => view.finishedOf!(index),
    records: view.history ?? records,
    serverOf: (index) => (router === undefined ? 0 : (router.assigned.get(index) ?? null)),
    servers,
    pageSize: ctx.server.pageSize,
    blockSize: view.blockSize,
    behaviour: modelBehaviour(ctx.opts),
  });
  if (view.history === undefined) return all;
  const mine = new Map<number, RequestExpectation>();
  for (const r of records) {
    const x = all.get(r.index);
    if (x !== undefined) mine.set(r.index, x);
  }
  return mine;
}
