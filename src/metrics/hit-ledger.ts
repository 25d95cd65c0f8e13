/**
 * Where did the cache hits go? The hit-loss ledger of a line served by several replicas, per request and summed:
 *
 *   available  - the page-aligned longest prefix shared with any earlier finished request anywhere (one infinite
 *                cache shared by every replica), warm requests included;
 *   on_replica - the same, counting only what the replica that served the request had served (or was warmed with);
 *   modelled   - that replica's LRU model at its capacity (the replay's predictor, one per replica);
 *   delivered  - the cached tokens the server reported.
 *
 * Losses: routing = available - on_replica, eviction = on_replica - modelled, engine = modelled - delivered
 * (negative: hits the model did not expect). The terms add up per request, so the sums do too. Requests that failed or
 * reported no cached tokens are left out of every term (and counted). Pure: records and prompts in, figures out.
 */
import type { RequestRecord } from "../schema/record.ts";
import type { BlockPrompt } from "./block-prompt.ts";
import { predictFromRecords } from "./predict-from-records.ts";

export interface LedgerReplica {
  url: string;
  /** Its cache capacity in tokens (its /server_info); null: unknown, no eviction modelled. */
  capacityTokens: number | null;
  /** Prompts it was warmed with before the line (held before the first send). */
  warmed: readonly BlockPrompt[];
}

export interface LedgerInput {
  /** Every request's prompt as blocks of one page (blockSize = pageSize), by request index. */
  prompts: ReadonlyArray<BlockPrompt | undefined>;
  records: readonly RequestRecord[];
  /** The replica that served each request, by request index; null: unknown (behind a router that did not say). */
  replicaOf: (index: number) => number | null;
  replicas: readonly LedgerReplica[];
  pageSize: number;
  /** Tokens per hash id of the prompts (a trace's block size); the page size when absent. */
  blockSize?: number;
  /**
   * The requests the ledger reports (a multi-turn round's turns), when the records hold more: every record is still
   * predicted from (a turn's history was cached by earlier rounds), only these are summed. All when absent.
   */
  reports?: (index: number) => boolean;
}

export interface LedgerTerms {
  available: number;
  onReplica: number;
  modelled: number;
  delivered: number;
}

export interface ReplicaLedger extends LedgerTerms {
  url: string;
  requests: number;
  /** Requests in the ledger (answered, cached tokens reported). */
  counted: number;
  ttftSumMs: number;
}

export interface HitLedger {
  perRequest: Map<number, LedgerTerms & { replica: number }>;
  totals: LedgerTerms;
  counted: number;
  perReplica: ReplicaLedger[];
  /** Requests no replica is known for (behind a router whose response named none): left out of every term. */
  unattributed: number;
}

const zero = (): LedgerTerms => ({ available: 0, onReplica: 0, modelled: 0, delivered: 0 });

export function hitLedger(i: LedgerInput): HitLedger {
  const page = { blockSize: i.blockSize ?? i.pageSize, pageSize: i.pageSize };
  const everyWarm = dedupe(i.replicas.flatMap((r) => r.warmed));
  const anywhere = predictFromRecords(i.prompts, i.records, { ...page, capacityTokens: null }, everyWarm);
  const onReplica = new Map<number, number>();
  const modelled = new Map<number, number>();
  i.replicas.forEach((replica, r) => {
    const mine = i.records.filter((rec) => i.replicaOf(rec.index) === r);
    for (const [index, p] of predictFromRecords(i.prompts, mine, { ...page, capacityTokens: null }, replica.warmed)) onReplica.set(index, p.infinite);
    const lru =
      replica.capacityTokens === null ? null : predictFromRecords(i.prompts, mine, { ...page, capacityTokens: replica.capacityTokens }, replica.warmed);
    for (const rec of mine) modelled.set(rec.index, lru === null ? onReplica.get(rec.index)! : lru.get(rec.index)!.lower);
  });
  const perRequest = new Map<number, LedgerTerms & { replica: number }>();
  const totals = zero();
  const perReplica: ReplicaLedger[] = i.replicas.map((r) => ({ url: r.url, requests: 0, counted: 0, ttftSumMs: 0, ...zero() }));
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
    if (!rec.ok || rec.cachedTokens < 0 || !anywhere.has(rec.index)) continue;
    const terms = {
      available: anywhere.get(rec.index)!.infinite,
      onReplica: onReplica.get(rec.index)!,
      modelled: modelled.get(rec.index)!,
      delivered: rec.cachedTokens,
    };
    perRequest.set(rec.index, { ...terms, replica });
    for (const t of [totals, row]) {
      t.available += terms.available;
      t.onReplica += terms.onReplica;
      t.modelled += terms.modelled;
      t.delivered += terms.delivered;
    }
    row.counted++;
    row.ttftSumMs += rec.ttftMs;
    counted++;
  }
  return { perRequest, totals, counted, perReplica, unattributed };
}

/** One warm prompt per distinct block path (every replica warmed with the same prefix is one prefix anywhere). */
function dedupe(prompts: readonly BlockPrompt[]): BlockPrompt[] {
  const seen = new Set<string>();
  return prompts.filter((p) => {
    const key = `${p.inputLength}:${p.hashIds.join(",")}`;
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
