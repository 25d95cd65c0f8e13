/**
 * Where did the cache hits go? The hit-loss ledger of a line served by several replicas, per request and summed, every
 * figure from the one cache model (cache-model.ts) on the same records:
 *
 *   available  - what one infinite cache shared by every replica would have served (certainly), warms included;
 *   home       - what the same replicas, at the same capacities, would certainly have served had every request gone
 *                to its prefix's home: the replica its prefix's first request went to (prefix affinity);
 *   guaranteed, possible - the model's range on the replica that served it, at its capacity;
 *   on_replica - what that replica would certainly have served with an infinite cache;
 *   delivered  - the cached tokens the server reported.
 *
 * Losses: routing = home - guaranteed (what spreading a prefix over replicas cost; 0 where every request goes home),
 * eviction = available - home (what the capacities cost even at home), engine = guaranteed - delivered where positive
 * (hits the server must have had and dropped), unexplained = delivered - possible where positive (hits the model
 * cannot explain). Inside the range the server's choices are legal and cost nothing. Requests that failed or
 * reported no cached tokens are left out of every term (and counted). Pure: records and prompts in, figures out.
 */
import type { RequestRecord } from "../schema/record.ts";
import type { CacheBehaviour } from "../config/cache-behaviour.ts";
import type { CacheSequence } from "./cache-model.ts";
import { expectPoint } from "./point-expectations.ts";

interface LedgerReplica {
  url: string;
  /** Its cache capacity in tokens (its /server_info); null: unknown, no eviction modelled. */
  capacityTokens: number | null;
  /** What it held before the line's first send (its warm), in the order it was sent. */
  warmed: readonly CacheSequence[];
}

export interface LedgerInput {
  sequenceOf: (index: number) => CacheSequence | undefined;
  finishedOf?: (index: number) => CacheSequence | undefined;
  records: readonly RequestRecord[];
  /** The replica that served each request, by request index; null: unknown (behind a router that did not say). */
  replicaOf: (index: number) => number | null;
  /** The prefix a request routes on (a session, a prefix group); null: none (its home is where it went). */
  homeKeyOf: (index: number) => number | null;
  replicas: readonly LedgerReplica[];
  pageSize: number;
  /** Tokens per hash id of the sequences (a trace's block size); the page size when absent. */
  blockSize?: number;
  behaviour: CacheBehaviour;
  /**
   * The requests the ledger reports (a multi-turn round's turns), when the records hold more: every record is still
   * modelled (a turn's history was cached by earlier rounds), only these are summed. All when absent.
   */
  reports?: (index: number) => boolean;
}

export interface LedgerTerms {
  available: number;
  home: number;
  guaranteed: number;
  possible: number;
  onReplica: number;
  delivered: number;
}

export interface LedgerLosses {
  routing: number;
  eviction: number;
  engine: number;
  unexplained: number;
}

interface ReplicaLedger extends LedgerTerms {
  url: string;
  requests: number;
  /** Requests in the ledger (answered, cached tokens reported). */
  counted: number;
  ttftSumMs: number;
}

export interface HitLedger {
  perRequest: Map<number, LedgerTerms & LedgerLosses & { replica: number }>;
  totals: LedgerTerms & LedgerLosses;
  counted: number;
  perReplica: ReplicaLedger[];
  /** Requests no replica is known for (behind a router whose response named none): left out of every term. */
  unattributed: number;
}

const zeroTerms = (): LedgerTerms => ({ available: 0, home: 0, guaranteed: 0, possible: 0, onReplica: 0, delivered: 0 });

/** Each key's home: the replica its earliest-sent request went to. */
function homes(i: LedgerInput): (index: number) => number | null {
  const first = new Map<number, { at: number; replica: number }>();
  for (const r of i.records) {
    const key = i.homeKeyOf(r.index);
    const replica = i.replicaOf(r.index);
    if (key === null || replica === null) continue;
    const seen = first.get(key);
    if (seen === undefined || r.startMs < seen.at) first.set(key, { at: r.startMs, replica });
  }
  return (index) => {
    const key = i.homeKeyOf(index);
    return key === null ? i.replicaOf(index) : (first.get(key)?.replica ?? i.replicaOf(index));
  };
}

export function hitLedger(i: LedgerInput): HitLedger {
  const common = {
    sequenceOf: i.sequenceOf,
    finishedOf: i.finishedOf,
    records: i.records,
    pageSize: i.pageSize,
    blockSize: i.blockSize ?? i.pageSize,
    behaviour: i.behaviour,
  };
  const servers = i.replicas.map((r) => ({ capacityTokens: r.capacityTokens, prior: r.warmed }));
  const actual = expectPoint({ ...common, serverOf: i.replicaOf, servers });
  // The counterfactual needs only what it guarantees.
  const home = expectPoint({ ...common, serverOf: homes(i), servers, sharpPossible: false });
  const anywhere = expectPoint({ ...common, serverOf: () => 0, servers: [{ capacityTokens: null, prior: dedupe(i.replicas.flatMap((r) => r.warmed)) }] });

  const perRequest = new Map<number, LedgerTerms & LedgerLosses & { replica: number }>();
  const totals = { ...zeroTerms(), routing: 0, eviction: 0, engine: 0, unexplained: 0 };
  const perReplica: ReplicaLedger[] = i.replicas.map((r) => ({ url: r.url, requests: 0, counted: 0, ttftSumMs: 0, ...zeroTerms() }));
  let counted = 0;
  let unattributed = 0;
  for (const rec of i.records) {
    if (i.reports !== undefined && !i.reports(rec.index)) continue;
    const replica = i.replicaOf(rec.index);
    if (replica === null) {
      unattributed++;
      continue;
    }
    const row = perReplica[replica]!;
    row.requests++;
    const x = actual.get(rec.index);
    if (!rec.ok || rec.cachedTokens < 0 || x === undefined) continue;
    const terms: LedgerTerms = {
      available: anywhere.get(rec.index)!.infiniteGuaranteed,
      home: home.get(rec.index)!.guaranteed,
      guaranteed: x.guaranteed,
      possible: x.possible,
      onReplica: x.infiniteGuaranteed,
      delivered: rec.cachedTokens,
    };
    const losses: LedgerLosses = {
      routing: terms.home - terms.guaranteed,
      eviction: terms.available - terms.home,
      engine: Math.max(0, terms.guaranteed - terms.delivered),
      unexplained: Math.max(0, terms.delivered - terms.possible),
    };
    perRequest.set(rec.index, { ...terms, ...losses, replica });
    for (const t of [totals, row] as (LedgerTerms & Partial<LedgerLosses>)[]) {
      for (const k of Object.keys(terms) as (keyof LedgerTerms)[]) t[k] += terms[k];
    }
    for (const k of Object.keys(losses) as (keyof LedgerLosses)[]) totals[k] += losses[k];
    row.counted++;
    row.ttftSumMs += rec.ttftMs;
    counted++;
  }
  return { perRequest, totals, counted, perReplica, unattributed };
}

/** One warm sequence per distinct chain (every replica warmed with the same prefix is one prefix anywhere). */
function dedupe(seqs: readonly CacheSequence[]): CacheSequence[] {
  const seen = new Set<string>();
  return seqs.filter((s) => {
    const key = `${s.length}:${s.hashIds.join(",")}:${s.ends?.join(",") ?? ""}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** max / mean of the requests each replica served (1: even); null with no request. */
export function routingImbalance(requestsPerReplica: readonly number[]): number | null {
  const total = requestsPerReplica.reduce((a, b) => a + b, 0);
  if (total === 0 || requestsPerReplica.length === 0) return null;
  return Math.max(...requestsPerReplica) / (total / requestsPerReplica.length);
}

/** A request's ledger terms as its details (--request-details) write them. */
export function ledgerTermsJson(t: LedgerTerms & LedgerLosses): Record<string, number> {
  return {
    available: t.available,
    home: t.home,
    on_replica: t.onReplica,
    guaranteed: t.guaranteed,
    possible: t.possible,
    delivered: t.delivered,
    loss_routing: t.routing,
    loss_eviction: t.eviction,
    loss_engine: t.engine,
  };
}
