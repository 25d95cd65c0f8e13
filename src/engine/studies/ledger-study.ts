/**
 * The hit-loss ledger as a study: with several replicas routed by the client, every request's hits accounted for
 * (available, lost to routing against the home placement, to eviction, to the engine) by the one cache model on the
 * replicas as the point left them (metrics/hit-ledger.ts), the line's replica keys, and each request's terms in its
 * details.
 */
import { modelBehaviour } from "../model-behaviour.ts";
import { hitLedger, ledgerTermsJson } from "../../metrics/hit-ledger.ts";
import { ledgerKeys } from "../../metrics/ledger-keys.ts";
import type { Study } from "../study.ts";

function reportsOf(records: readonly { index: number }[]): (index: number) => boolean {
  const mine = new Set(records.map((r) => r.index));
  return (index) => mine.has(index);
}

export const ledgerStudy: Study = {
  name: "ledger",
  after(point, ctx, plan) {
    const { router } = point;
    const set = ctx.replicas;
    const view = plan.cache;
    if (router === undefined || set === undefined || view === null) return null;
    const ledger = hitLedger({
      sequenceOf: (index) => view.sequenceOf(index),
      finishedOf: view.finishedOf === undefined ? undefined : (index) => view.finishedOf!(index),
      records: view.history ?? point.measurement.records,
      replicaOf: (index) => router.assigned.get(index) ?? null,
      homeKeyOf: (index) => view.homeKeyOf(index),
      replicas: point.servers.map((s) => ({ url: s.url, capacityTokens: s.capacityTokens, warmed: s.prior })),
      pageSize: ctx.server.pageSize,
      blockSize: view.blockSize,
      behaviour: modelBehaviour(ctx.opts),
      // The point's requests are accounted; the history before them is only modelled.
      reports: view.history === undefined ? undefined : reportsOf(point.measurement.records),
    });
    const keys = ledgerKeys(
      ledger,
      router.policy,
      set.urls.map((url, r) => ({ url, serverVersion: set.servers[r]!.info.version, cacheCapacityTokens: set.servers[r]!.info.cacheCapacityTokens })),
    );
    return {
      keys,
      samples: { ledger: keys.ledger_requests },
      details: (index) => {
        const terms = ledger.perRequest.get(index);
        return { ledger: terms === undefined ? null : ledgerTermsJson(terms) };
      },
    };
  },
};
