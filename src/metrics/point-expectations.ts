/**
 * Every request of a point, judged by the one cache model (cache-model.ts) on the server that served it: the records
 * of each replica (one server: all of them) in, each request's expected cached range out. The producers say what was
 * sent (each request's sequence, what each server held before the first send); nothing else computes an expectation.
 * Pure: records in, ranges out.
 */
import type { ServerInfo } from "../backends/types.ts";
import type { RequestRecord } from "../schema/record.ts";
import type { CacheBehaviour } from "../config/cache-behaviour.ts";
import { expectCache, type CacheSequence, type Expectation, type ModelRequest } from "./cache-model.ts";
import { expectSlotCache } from "./slot-cache-model.ts";

interface ModelledServer {
  /** Its cache capacity in tokens (stated or measured); null: unknown (no eviction assumed). */
  capacityTokens: number | null;
  /** What it held before the point's first send, in the order it was sent (the warm, the flush probe). */
  prior: readonly CacheSequence[];
  /**
   * A server with one prompt cache per slot (llama.cpp): what each slot held at the first send (null: empty), one
   * entry a slot; its ranges are then the slot model's (slot-cache-model.ts), `capacityTokens` unused. Absent: one
   * shared paged cache.
   */
  slots?: readonly (CacheSequence | null)[];
}

export interface PointCacheInput {
  /** Each request's prompt, by its index; a request without one is not modelled. */
  sequenceOf: (index: number) => CacheSequence | undefined;
  /** What a request's end caches where it is not its prompt plus pages of its own (a conversation's next turn shares them). */
  finishedOf?: (index: number) => CacheSequence | undefined;
  records: readonly RequestRecord[];
  /** The server that served each request (an index into `servers`); null: unknown (behind a router that did not say). */
  serverOf: (index: number) => number | null;
  servers: readonly ModelledServer[];
  pageSize: number;
  /** Tokens per hash id of sequences without their own segment ends. */
  blockSize: number;
  behaviour: CacheBehaviour;
  /** False: only each request's guaranteed is wanted (its possible is the infinite cache's). */
  sharpPossible?: boolean;
}

export interface RequestExpectation extends Expectation {
  server: number;
}

/** The request as the model reads it: its send, first token and end on the client's clock. */
function modelRequestOf(r: RequestRecord, prompt: CacheSequence, finished?: CacheSequence): ModelRequest {
  const endMs = r.firstTokenMs > 0 ? Math.max(r.lastEventMs, r.firstTokenMs) : r.startMs + r.latencyMs;
  const request: ModelRequest = { key: r.index, prompt, finished, startMs: r.startMs, firstTokenMs: r.firstTokenMs, endMs, ok: r.ok, generated: r.outputLen };
  if (r.slot !== undefined) request.slot = r.slot;
  return request;
}

export function expectPoint(i: PointCacheInput): Map<number, RequestExpectation> {
  const byServer: ModelRequest[][] = i.servers.map(() => []);
  for (const r of i.records) {
    const s = i.serverOf(r.index);
    const prompt = i.sequenceOf(r.index);
    if (s === null || prompt === undefined) continue;
    byServer[s]!.push(modelRequestOf(r, prompt, i.finishedOf?.(r.index)));
  }
  const out = new Map<number, RequestExpectation>();
  i.servers.forEach((server, s) => {
    const model = expectCache(byServer[s]!, server.prior, {
      pageSize: i.pageSize,
      blockSize: i.blockSize,
      // A slot server's infinite-cache figures (the ledger's ceiling) are the paged model's without eviction.
      capacityTokens: server.slots === undefined ? server.capacityTokens : null,
      behaviour: i.behaviour,
      sharpPossible: i.sharpPossible,
    });
    const slotted = server.slots === undefined ? null : expectSlotCache(byServer[s]!, { pageSize: i.pageSize, blockSize: i.blockSize, held: server.slots });
    for (const [index, x] of model) {
      const slot = slotted?.get(index);
      const range = slot === undefined ? x : { ...x, guaranteed: slot.guaranteed, possible: slot.possible };
      out.set(index, { ...range, server: s });
    }
  });
  return out;
}

/**
 * What a server's cache holds before a page is gone for good: its device pool, plus the host tier its evicted pages
 * move to (SGLang HiCache), whose hits it reports as cached too; null: the device pool is not stated.
 */
export function modelCapacityOf(info: Pick<ServerInfo, "cacheCapacityTokens" | "hostCacheCapacityTokens">): number | null {
  if (info.cacheCapacityTokens === null) return null;
  return info.cacheCapacityTokens + (info.hostCacheCapacityTokens ?? 0);
}
