/**
 * The server's counters against the client's own view of the same requests: over the measured window, the prompt
 * and cached-token counter deltas against the sums of the prompt lengths and cached_tokens the client saw, and the
 * request counter against the requests that finished - per server (replica) where routed. A difference beyond
 * rounding (counters are floats: 0.5) is a finding, with both figures: either side may be the one that lies. Pure.
 */
import type { RequestRecord } from "../schema/record.ts";
import { CACHE_TIERS, type TelemetrySnapshot } from "./telemetry-dialects.ts";

const RECONCILED_COUNTERS = ["prompt_tokens", "cached_tokens", "requests"] as const;
type TierCounter = `cached_tokens_${CacheTierName}`;
type CacheTierName = (typeof CACHE_TIERS)[number];
type ReconciledCounter = (typeof RECONCILED_COUNTERS)[number] | TierCounter;

export interface ReconciliationRow {
  /** The replica's index; null: the one server. */
  replica: number | null;
  url: string;
  counter: ReconciledCounter;
  server: number;
  client: number;
  agrees: boolean;
}

/** Counters are floats written by the server: a difference of half a token (or request) or less is rounding. */
const ROUNDING = 0.5;

const SNAPSHOT_FIELD = { prompt_tokens: "promptTokens", cached_tokens: "cachedTokens", requests: "requests" } as const satisfies Record<
  (typeof RECONCILED_COUNTERS)[number],
  keyof TelemetrySnapshot
>;

/** Each tier's cached tokens in a request's record (SGLang HiCache's cached_tokens_details; -1: not reported). */
const TIER_FIELD = { device: "cachedDeviceTokens", host: "cachedHostTokens", storage: "cachedStorageTokens" } as const satisfies Record<
  CacheTierName,
  keyof RequestRecord
>;

/** The client's figure of one counter over its records (a request that failed counts nowhere); null: the server reported no cached_tokens. */
function clientFigure(counter: (typeof RECONCILED_COUNTERS)[number], records: readonly RequestRecord[]): number | null {
  const done = records.filter((r) => r.ok);
  if (counter === "requests") return done.length;
  if (counter === "prompt_tokens") return done.reduce((a, r) => a + r.promptLen, 0);
  if (done.some((r) => r.cachedTokens < 0)) return null;
  return done.reduce((a, r) => a + r.cachedTokens, 0);
}

export interface ServerWindow {
  replica: number | null;
  url: string;
  /** The scrape as the measurement began, and the one after it. */
  before: TelemetrySnapshot | null;
  after: TelemetrySnapshot | null;
  /** The records this server served. */
  records: readonly RequestRecord[];
}

/** One row per server and counter both sides know; a counter the dialect does not expose has no row. */
export function reconcile(windows: readonly ServerWindow[]): ReconciliationRow[] {
  const rows: ReconciliationRow[] = [];
  for (const w of windows) {
    if (w.before === null || w.after === null) continue;
    for (const counter of RECONCILED_COUNTERS) {
      const field = SNAPSHOT_FIELD[counter];
      const a = w.before[field];
      const b = w.after[field];
      if (typeof a !== "number" || typeof b !== "number") continue;
      const server = b - a;
      const client = clientFigure(counter, w.records);
      if (client === null) continue;
      rows.push({ replica: w.replica, url: w.url, counter, server, client, agrees: Math.abs(server - client) <= ROUNDING });
    }
    // Each tier apart where the server labels its series by tier and every finished request reported its breakdown:
    // a host-tier hit the server leaves out of one figure but not the other shows here (ROCm/ATOM #1898).
    const done = w.records.filter((r) => r.ok);
    const tiersBefore = w.before.cachedTokensByTier;
    const tiersAfter = w.after.cachedTokensByTier;
    if (tiersBefore === null || tiersAfter === null || done.some((r) => r.cachedDeviceTokens < 0)) continue;
    for (const tier of CACHE_TIERS) {
      const client = done.reduce((a, r) => a + Math.max(0, r[TIER_FIELD[tier]]), 0);
      const a = tiersBefore[tier] ?? 0;
      const b = tiersAfter[tier];
      // A tier with no series and no hit the client saw has nothing to reconcile.
      if (b === null && client === 0) continue;
      const server = (b ?? 0) - a;
      rows.push({ replica: w.replica, url: w.url, counter: `cached_tokens_${tier}`, server, client, agrees: Math.abs(server - client) <= ROUNDING });
    }
  }
  return rows;
}
