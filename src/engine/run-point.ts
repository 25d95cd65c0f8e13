/**
 * The one path of a point: reset (one server, or every replica on its own) -> warm (each group on the replicas the
 * route first sends it) -> measure -> the cache model (each request's range on the server that served it) -> each
 * registered study -> the producer's lines -> gates -> the producer's sink. Producers (sweep lines, capacity probes,
 * replay runs) hand a PointPlan and get its lines back; none sequences these steps itself.
 */
import { log } from "../log.ts";
import type { SendResult } from "./send.ts";
import { evaluateGates } from "../gates/evaluate.ts";
import { measure, type Measurement } from "./measure.ts";
import type { PointContext } from "./point-context.ts";
import { modelledServers, pointRanges } from "./point-model.ts";
import type { MeasuredPoint, PointPlan, RoutePlan, WarmPlan, JudgedLine, StudyResult } from "./point-plan.ts";
import { ReplicaRouter } from "./replica-router.ts";
import { onReplica, resetReplicas, type ReplicaSet } from "./replica-set.ts";
import { cacheSlotsOf, resetCache, type CacheReset } from "./reset-cache.ts";
import { STUDIES } from "./studies/registered-studies.ts";
import { momentsOf } from "./point-moments.ts";
import type { Study, StudyWatch } from "./study.ts";
import { warm, type WarmResult } from "./warm.ts";

/** A point measured and emitted: its lines (gates judged) and what it measured. */
export interface PointOutcome<Line> {
  lines: Line[];
  point: MeasuredPoint;
  /** This process's request that finished well last, with its probe head (its share, with shards); null: none (or a source that drove itself). */
  lastFinished: SendResult["lastFinished"];
}

const NO_RESET: CacheReset = { flushed: false, attempts: 0, probeCachedTokens: null, flushGap: null, probeIds: null, templateHeadTokens: null };
const NO_WARM: WarmResult = { cachedTokens: null, requests: 0 };

/** Each study's watch of one point, by the study's place in the session's list (undefined: it watches nothing). */
export type PointWatches = readonly (StudyWatch | undefined)[];

/** Every study starts watching a point: before its reset, or where its requests drive themselves (a round), as they begin. */
export function watchPoint(ctx: PointContext, label: string, studies: readonly Study[] = STUDIES): PointWatches {
  return studies.map((study) => study.begin?.(ctx, label));
}

export async function runPoint<Line extends JudgedLine>(
  ctx: PointContext,
  plan: PointPlan<Line>,
  studies: readonly Study[] = STUDIES,
  watching?: PointWatches,
): Promise<PointOutcome<Line>> {
  plan.started?.();
  const set = ctx.replicas;
  const router = plan.route === null ? undefined : "router" in plan.route ? plan.route.router : routerFor(ctx, plan.route);
  const route = plan.route === null || "router" in plan.route ? null : plan.route;
  let reset: CacheReset;
  let warmed: PreparedPoint;
  let measurement: Measurement;
  let lastFinished: SendResult["lastFinished"] = null;
  const watches = watching ?? watchPoint(ctx, "measured" in plan.send ? "point" : plan.send.progress.label, studies);
  try {
    warmed = await preparePoint(ctx, plan, router);
    reset = warmed.reset;
    if ("measured" in plan.send) measurement = plan.send.measured;
    else {
      const moments = momentsOf(watches);
      const { own, ...m } = await measure({ ...plan.send, moments, ctx: router === undefined ? ctx : { ...ctx, router } });
      measurement = m;
      lastFinished = own.lastFinished;
    }
  } finally {
    plan.sent?.();
    for (const watch of watches) await watch?.stop();
  }
  // What the flush's proof left cached (its probe), which the model counts against the capacity.
  const probeLen = reset.probeCachedTokens !== null && reset.probeIds !== null ? reset.probeIds.length : null;
  const view = plan.cache;
  const modelled = view === null ? [] : modelledServers(ctx, view, warmed.groupsOn, probeLen);
  const ranges = view === null ? null : pointRanges(ctx, view, measurement.records, modelled, router);
  const judged = view?.judged === false ? null : ranges;
  const point: MeasuredPoint = { reset, warm: warmed.warm, measurement, router, servers: modelled, ranges: judged };
  const found: StudyResult[] = [];
  for (const [i, study] of studies.entries()) {
    const outcome = await study.after(point, ctx, plan as PointPlan<unknown>, watches[i]);
    if (outcome !== null) found.push({ name: study.name, ...outcome });
  }
  const made = plan.lines;
  const lines = made.build(point, found);
  // Gates read the finished line, so they are judged on exactly the numbers written next to them.
  for (const line of lines) line.gates = made.judge === undefined ? evaluateGates(ctx.opts.gates ?? [], line) : made.judge(line);
  made.emit(lines, point, detailsOf(point, found, set, route));
  return { lines, point, lastFinished };
}

/** What a point's reset and warm did: the reset's proof, the warm's finding, and the groups warmed on each server. */
export interface PreparedPoint {
  reset: CacheReset;
  warm: WarmResult;
  groupsOn: number[][];
}

/** The reset (one server, or every replica on its own) and the warm (through the route); also a run's before its first round. */
export async function preparePoint(
  ctx: PointContext,
  plan: Pick<PointPlan<unknown>, "reset" | "warm">,
  router: ReplicaRouter | undefined,
): Promise<PreparedPoint> {
  const set = ctx.replicas;
  const reset = plan.reset === null ? NO_RESET : set === undefined ? await resetCache(ctx, plan.reset) : await resetReplicas(ctx, set, plan.reset);
  if (plan.warm === null) return { reset, warm: NO_WARM, groupsOn: Array.from({ length: set === undefined ? 1 : set.urls.length }, () => []) };
  return { reset, ...(await warmPoint(ctx, plan.warm, router)) };
}

/** The router of a route over the run's replicas (none with one server); the oracle's model starts with every prefix where it was warmed. */
export function routerFor(ctx: PointContext, route: RoutePlan): ReplicaRouter | undefined {
  const set = ctx.replicas;
  if (set === undefined) return undefined;
  const r = ctx.opts.replicas!;
  return new ReplicaRouter(set.urls, r.route, (index) => route.keysOf(index), {
    seed: ctx.opts.seed,
    via: r.via,
    prefixes: route.prefixes,
    prefixesHeld: set.servers.map((s) =>
      s.info.cacheCapacityTokens === null || route.prefixTokens === 0 ? null : Math.floor(s.info.cacheCapacityTokens / route.prefixTokens),
    ),
    warmedEverywhere: route.warmedEverywhere,
    firstIndexOf: route.firstIndexOf === undefined ? undefined : (p) => route.firstIndexOf!(p),
  });
}

/** Each server warmed with its groups (one server: all; replicas: those the router first sends it), in order. */
async function warmPoint(ctx: PointContext, plan: WarmPlan, router: ReplicaRouter | undefined): Promise<{ warm: WarmResult; groupsOn: number[][] }> {
  const all = Array.from({ length: plan.groups }, (_, g) => g);
  const set = ctx.replicas;
  if (set === undefined) {
    if (all.length === 0) return { warm: NO_WARM, groupsOn: [[]] };
    return { warm: await warmOn(ctx, plan, all, null), groupsOn: [all] };
  }
  const everywhere = plan.everywhere === true || ctx.opts.warmReplicas === "all" || router === undefined;
  const groupsOn = set.urls.map((_, r) => all.filter((g) => everywhere || router!.warmsOn(g).includes(r)));
  const warms: WarmResult[] = [];
  for (let r = 0; r < set.urls.length; r++) {
    if (groupsOn[r]!.length === 0) continue;
    warms.push(await warmOn(onReplica(ctx, set, r), plan, groupsOn[r]!, set.urls[r]!));
  }
  if (warms.length === 0) return { warm: NO_WARM, groupsOn };
  const found = warms.map((w) => w.cachedTokens);
  return {
    warm: {
      cachedTokens: found.every((c) => c === null) ? null : Math.max(...found.map((c) => c ?? -1)),
      requests: warms.reduce((a, w) => a + w.requests, 0),
    },
    groupsOn,
  };
}

async function warmOn(ctx: PointContext, plan: WarmPlan, groups: readonly number[], url: string | null): Promise<WarmResult> {
  const slots = cacheSlotsOf(ctx.server);
  log.info(plan.announce(groups.length, slots.length, url));
  return warm(ctx, plan.requestsOf(groups, slots), plan.say);
}

/** What each request's details add: its range, where it went (with several replicas), and each study's. */
function detailsOf(
  point: MeasuredPoint,
  studies: readonly StudyResult[],
  set: ReplicaSet | undefined,
  route: RoutePlan | null,
): ((index: number) => Record<string, unknown>) | undefined {
  const { ranges, router } = point;
  const adding = studies.filter((s) => s.details !== undefined);
  if (ranges === null && router === undefined && adding.length === 0) return undefined;
  return (index) => {
    const x = ranges?.get(index);
    const out: Record<string, unknown> = x === undefined ? {} : { expected_cached_tokens_lower: x.guaranteed, expected_cached_tokens_upper: x.possible };
    if (router !== undefined && set !== undefined) {
      const replica = router.assigned.get(index);
      out.replica = replica ?? null;
      out.replica_url = replica === undefined ? null : set.urls[replica]!;
      Object.assign(out, route?.detailsOf?.(index));
    }
    for (const s of adding) Object.assign(out, s.details!(index));
    return out;
  };
}
