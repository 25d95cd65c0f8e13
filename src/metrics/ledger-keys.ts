/** The replica keys of a line (key table: route, replicas, routing_imbalance, ledger_*, loss_*) from its ledger. Pure. */
import type { REPLICA_KEYS, SweepRecord } from "../schema/lines.ts";
import { routingImbalance, type HitLedger } from "./hit-ledger.ts";

/** A line's replica keys, every one given (optional in a line: only a run over several replicas has them). */
export type ReplicaKeys = Required<Pick<SweepRecord, (typeof REPLICA_KEYS)[number]>>;

export interface ReplicaInfo {
  url: string;
  serverVersion: string | null;
  cacheCapacityTokens: number | null;
}

const ratio = (part: number, whole: number): number | null => (whole > 0 ? part / whole : null);

export function ledgerKeys(ledger: HitLedger, route: string, replicas: readonly ReplicaInfo[]): ReplicaKeys {
  const t = ledger.totals;
  const { routing, eviction, engine } = t;
  return {
    route,
    replicas: ledger.perReplica.map((r, i) => ({
      url: r.url,
      server_version: replicas[i]?.serverVersion ?? null,
      cache_capacity_tokens: replicas[i]?.cacheCapacityTokens ?? null,
      requests: r.requests,
      ledger_requests: r.counted,
      available_tokens: r.available,
      on_replica_tokens: r.onReplica,
      modelled_tokens: r.guaranteed,
      delivered_tokens: r.delivered,
      mean_ttft_ms: r.counted > 0 ? r.ttftSumMs / r.counted : null,
    })),
    routing_imbalance: routingImbalance(ledger.perReplica.map((r) => r.requests)),
    ledger_requests: ledger.counted,
    ledger_unattributed_requests: ledger.unattributed,
    ledger_available_tokens: t.available,
    ledger_on_replica_tokens: t.onReplica,
    ledger_home_tokens: t.home,
    ledger_modelled_tokens: t.guaranteed,
    ledger_possible_tokens: t.possible,
    ledger_delivered_tokens: t.delivered,
    loss_routing_tokens: routing,
    loss_eviction_tokens: eviction,
    loss_engine_tokens: engine,
    ledger_unexplained_tokens: t.unexplained,
    loss_routing_ratio: ratio(routing, t.available),
    loss_eviction_ratio: ratio(eviction, t.available),
    loss_engine_ratio: ratio(engine, t.available),
  };
}
