/**
 * Several replicas (--base-url A,B,...): each one preflighted as the first was (one backend, one page size, each its
 * own capacity and version), with its own control calls; and a request context as one replica sees it, for its
 * flush, proof and warm. The first replica is the run's prepared server.
 */
import { BenchError } from "../errors.ts";
import { log } from "../log.ts";
import type { RunOptions } from "../config/options.ts";
import type { Control } from "../backends/http.ts";
import type { ServerProfile } from "../backends/types.ts";
import type { PreparedRun } from "./prepare.ts";
import { withPassport } from "./passport-facts.ts";
import { resetCache, type CacheReset, type ResetContext, type ResetInput } from "./reset-cache.ts";

export interface ReplicaSet {
  urls: readonly string[];
  ctls: readonly Control[];
  servers: readonly ServerProfile[];
}

export async function prepareReplicas(
  opts: Pick<RunOptions, "replicas" | "pageSize" | "servedModelName" | "flush" | "verifyCache" | "passport">,
  run: Pick<PreparedRun, "ctl" | "server" | "backend">,
): Promise<ReplicaSet> {
  const urls = opts.replicas!.urls;
  // Behind a router the run was prepared against the router: every replica is preflighted on its own address.
  const behindRouter = opts.replicas!.via !== undefined;
  const ctls: Control[] = behindRouter ? [] : [run.ctl];
  const servers: ServerProfile[] = behindRouter ? [] : [run.server];
  for (const url of behindRouter ? urls : urls.slice(1)) {
    const ctl: Control = { ...run.ctl, baseUrl: url };
    const server = withPassport(
      await run.backend.preflight(ctl, {
        pageSize: opts.pageSize,
        servedModelName: opts.servedModelName ?? run.server.model,
        checkFlush: opts.flush === "auto" && opts.verifyCache !== "off",
      }),
      opts.passport,
      url,
    );
    for (const warning of server.warnings) log.warn(`${url}: ${warning}`);
    if (server.pageSize !== run.server.pageSize) {
      throw new BenchError(
        `--base-url: ${url} has a page size of ${server.pageSize}, ${urls[0]} of ${run.server.pageSize}; replicas must cache alike (pass --page-size to say which)`,
      );
    }
    ctls.push(ctl);
    servers.push(server);
  }
  log.info(
    behindRouter
      ? `${urls.length} replicas behind the router ${opts.replicas!.via!.url}`
      : `${urls.length} replicas, routed by the client (--route ${opts.replicas!.route})`,
  );
  return { urls, ctls, servers };
}

/** A context as replica `r` sees it: its control calls, its URL, its preflight (the run's page size). */
export function onReplica<C extends { ctl: Control; server: ServerProfile; opts: { baseUrl: string } }>(ctx: C, set: ReplicaSet, r: number): C {
  return { ...ctx, ctl: set.ctls[r]!, server: { ...set.servers[r]!, pageSize: ctx.server.pageSize }, opts: { ...ctx.opts, baseUrl: set.urls[r]! } };
}

/** Every replica reset on its own (flushed, proven), as one reset: proven only where every probe found nothing. */
export async function resetReplicas<C extends ResetContext & Parameters<typeof onReplica>[0]>(ctx: C, set: ReplicaSet, input: ResetInput): Promise<CacheReset> {
  const resets: CacheReset[] = [];
  // The probe is the canary on each: the last prompt of a line ran on one replica only and proves nothing elsewhere.
  for (let r = 0; r < set.urls.length; r++)
    resets.push(await resetCache(onReplica(ctx, set, r), { ...input, probeIds: null, label: `${input.label} on ${set.urls[r]}` }));
  const probes = resets.map((x) => x.probeCachedTokens);
  return {
    flushed: resets.every((x) => x.flushed),
    attempts: resets.reduce((a, x) => a + x.attempts, 0),
    probeCachedTokens: probes.some((p) => p === null) ? null : Math.max(...(probes as number[])),
    flushGap: resets.find((x) => x.flushGap !== null)?.flushGap ?? null,
    probeIds: resets[0]!.probeIds,
    templateHeadTokens: null,
  };
}
