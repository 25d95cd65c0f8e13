/**
 * The shard protocol's messages, one JSON object per frame, and their validation: a coordinator accepts nothing it
 * has not checked, from shards or from strangers (a wrong field type is a refused message, never a crash).
 *
 *   shard -> coordinator: hello (token, rank, size) | pong (clock probe) | records (one job's) | beat | failed
 *   coordinator -> shard: welcome (what the preflight learned) | reject | ping | job (a pct, or a round, released) | stop
 */
import type { ClientHealth } from "../metrics/self-check.ts";
import type { RequestRecord } from "../schema/record.ts";

/** Protocol version: shards of another version are refused. */
export const PROTOCOL_VERSION = 1;

/** What a shard learns from the coordinator's preflight (it never asks the server itself). */
export interface ShardSetup {
  run_id: string;
  /** Hash of the options that shape the workload: every shard must have been started with the same ones. */
  options_hash: string;
  model: string | null;
  page_size: number;
  text_mode: "cumulative" | "incremental";
  server_version: string | null;
  /** The backend and endpoint the preflight settled (--backend auto is resolved once, by the coordinator). */
  backend: string;
  endpoint: string;
}

/** A line released to the shards, after the coordinator flushed and warmed. */
export interface JobMessage {
  t: "job";
  /** The line's position in the sweep (0, 1, ...): shards draw every earlier pct's prompts first. */
  job: number;
  pct: number;
  working_set: number;
  /** Its rate's position in --request-rate. */
  rate_index: number;
  /** A multi-turn round: the job releases that round of every shard's conversations (pct and rate_index are 0). */
  round?: number;
}

/** One request record on the wire: times that are points in time are epoch ms; the rest as in RequestRecord. */
export type WireRecord = Omit<RequestRecord, "itlMs" | "textBytes" | "payloads" | TimePoint> & { itlMs: number[] } & Record<`${string}EpochMs`, number> &
  Record<string, unknown>;

/** The record's points in time (nowMs clock): on the wire each is `<name minus Ms>EpochMs`, and 0 (none) stays 0. */
const TIME_POINTS = ["intendedMs", "startMs", "firstTokenMs", "lastEventMs"] as const;
type TimePoint = (typeof TIME_POINTS)[number];
const epochKey = (k: TimePoint): string => `${k.slice(0, -2)}EpochMs`;

/** A shard's share of one job. */
export interface RecordsMessage {
  t: "records";
  job: number;
  records: WireRecord[];
  health: ClientHealth;
  /** The shard's own measured window, epoch ms on its clock. */
  startEpochMs: number;
  endEpochMs: number;
  /** The run was interrupted (stop) while this job ran. */
  interrupted: boolean;
}

export type ShardMessage =
  | { t: "hello"; version: number; token: string; rank: number; size: number; pid: number; host: string }
  | { t: "pong"; id: number; shardEpochMs: number }
  | { t: "beat" }
  | { t: "failed"; message: string }
  /** The shard has drawn the job's prompts and filled its look-ahead: it waits for "go". */
  | { t: "ready"; job: number }
  | RecordsMessage;

export type CoordinatorMessage =
  | { t: "welcome"; setup: ShardSetup }
  | { t: "reject"; reason: string }
  | { t: "ping"; id: number }
  | JobMessage
  /** Start the job's schedule at this time, on the shard's own epoch clock (the coordinator applied its offset). */
  | { t: "go"; job: number; start_epoch_ms: number }
  | { t: "stop" };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isInt = (v: unknown, min = 0): v is number => Number.isSafeInteger(v) && (v as number) >= min;
const isNum = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const isStr = (v: unknown, maxLen = 4096): v is string => typeof v === "string" && v.length <= maxLen;

/** Longest text a shard may send in one field (generated text of one request included). */
const MAX_TEXT = 4 * 1024 * 1024;

/** Checks a message from a shard; returns it typed, or a short reason it is refused. */
export function parseShardMessage(v: unknown): ShardMessage | string {
  if (!isObject(v) || typeof v.t !== "string") return "not a message object";
  switch (v.t) {
    case "hello":
      if (!isInt(v.version) || !isStr(v.token, 256) || !isInt(v.rank) || !isInt(v.size, 1) || !isInt(v.pid) || !isStr(v.host, 256)) {
        return "malformed hello";
      }
      return v as ShardMessage;
    case "pong":
      return isInt(v.id) && isNum(v.shardEpochMs) ? (v as ShardMessage) : "malformed pong";
    case "beat":
      return { t: "beat" };
    case "failed":
      return isStr(v.message, MAX_TEXT) ? (v as ShardMessage) : "malformed failed";
    case "ready":
      return isInt(v.job) ? (v as ShardMessage) : "malformed ready";
    case "records":
      return parseRecords(v);
    default:
      return `unknown message type ${JSON.stringify(String(v.t).slice(0, 40))}`;
  }
}

function parseRecords(v: Record<string, unknown>): RecordsMessage | string {
  if (!isInt(v.job) || !Array.isArray(v.records) || !isNum(v.startEpochMs) || !isNum(v.endEpochMs) || typeof v.interrupted !== "boolean") {
    return "malformed records";
  }
  if (!isHealth(v.health)) return "malformed records: health";
  for (let i = 0; i < v.records.length; i++) {
    const problem = wireRecordProblem(v.records[i]);
    if (problem !== null) return `malformed records: record ${i}: ${problem}`;
  }
  return v as unknown as RecordsMessage;
}

function isHealth(v: unknown): v is ClientHealth {
  return (
    isObject(v) &&
    isNum(v.loopLagP99Ms) &&
    isNum(v.loopLagMaxMs) &&
    isNum(v.ownLagP99Ms) &&
    isNum(v.jsCpuPct) &&
    (v.httpCpuPct === null || isNum(v.httpCpuPct)) &&
    isNum(v.processCpuPct)
  );
}

/** Why a wire record is unusable, or null. Fields other than the core ones may only hold plain JSON scalars or number arrays. */
function wireRecordProblem(r: unknown): string | null {
  if (!isObject(r)) return "not an object";
  if (!isInt(r.index)) return "index";
  if (typeof r.ok !== "boolean") return "ok";
  if (!(r.failureKind === null || isStr(r.failureKind, 64))) return "failureKind";
  if (!isStr(r.failureMessage, MAX_TEXT) || !isStr(r.generatedText, MAX_TEXT)) return "text";
  if (!(r.finishReason === null || isStr(r.finishReason, 64))) return "finishReason";
  for (const key of ["httpStatus", "promptLen", "ttftMs", "latencyMs", "outputLen", "cachedTokens", "tokenEvents", ...TIME_POINTS.map(epochKey)]) {
    if (!isNum(r[key])) return key;
  }
  if (!Array.isArray(r.itlMs) || !r.itlMs.every(isNum)) return "itlMs";
  for (const [key, value] of Object.entries(r)) {
    const plain = value === null || typeof value === "boolean" || isNum(value) || isStr(value, MAX_TEXT);
    if (!plain && !(Array.isArray(value) && value.every(isNum))) return key;
  }
  return null;
}

/** Checks a message from the coordinator; returns it typed, or a short reason. */
export function parseCoordinatorMessage(v: unknown): CoordinatorMessage | string {
  if (!isObject(v) || typeof v.t !== "string") return "not a message object";
  switch (v.t) {
    case "welcome": {
      const s = v.setup;
      const ok =
        isObject(s) &&
        isStr(s.run_id) &&
        isStr(s.options_hash) &&
        (s.model === null || isStr(s.model)) &&
        isInt(s.page_size, 1) &&
        (s.text_mode === "cumulative" || s.text_mode === "incremental") &&
        (s.server_version === null || isStr(s.server_version)) &&
        isStr(s.backend, 64) &&
        isStr(s.endpoint, 64);
      return ok ? (v as CoordinatorMessage) : "malformed welcome";
    }
    case "reject":
      return isStr(v.reason) ? (v as CoordinatorMessage) : "malformed reject";
    case "ping":
      return isInt(v.id) ? (v as CoordinatorMessage) : "malformed ping";
    case "job":
      return isInt(v.job) && isInt(v.pct) && isInt(v.working_set, 1) && isInt(v.rate_index) && (v.round === undefined || isInt(v.round))
        ? (v as CoordinatorMessage)
        : "malformed job";
    case "go":
      return isInt(v.job) && isNum(v.start_epoch_ms) ? (v as CoordinatorMessage) : "malformed go";
    case "stop":
      return { t: "stop" };
    default:
      return `unknown message type ${JSON.stringify(String(v.t).slice(0, 40))}`;
  }
}

/** A record for the wire: points in time to epoch ms, typed arrays to plain arrays, deferred text already resolved. */
export function toWireRecord(r: RequestRecord, timeOriginMs: number): WireRecord {
  const { itlMs, textBytes: _text, payloads: _payloads, intendedMs: _i, startMs: _s, firstTokenMs: _f, lastEventMs: _l, ...rest } = r;
  const wire: Record<string, unknown> = { ...rest, itlMs: Array.from(itlMs) };
  for (const k of TIME_POINTS) wire[epochKey(k)] = r[k] === 0 ? 0 : timeOriginMs + r[k];
  return wire as WireRecord;
}

/** Back from the wire onto this process's clock: `offsetMs` is the shard's clock minus ours. */
export function fromWireRecord(w: WireRecord, timeOriginMs: number, offsetMs: number): RequestRecord {
  const rec: Record<string, unknown> = { ...w, itlMs: Float64Array.from(w.itlMs) };
  for (const k of TIME_POINTS) {
    const epochMs = w[epochKey(k)] as number;
    delete rec[epochKey(k)];
    rec[k] = epochMs === 0 ? 0 : epochMs - offsetMs - timeOriginMs;
  }
  return rec as unknown as RequestRecord;
}
