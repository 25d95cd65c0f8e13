/**
 * SGLang native API outside the hot path: request bodies, cache flush, server info and preflight.
 * Wire facts: shared/docs/protocol.md §1 (/generate), §2.1 (/flush_cache), §2.2 (info endpoints).
 */
import { BenchError } from "../errors.ts";

/** The request body split around the input_ids digits, so bodies are memcpy'd together, never re-serialized. */
export interface BodyTemplate {
  head: Uint8Array;
  tail: Uint8Array;
  /** --extra-request-body replaced input_ids: the body is sent as is, as the script's dict merge would. */
  idsOverridden: boolean;
}

const IDS_MARK = "\u0000warmbench-ids\u0000";
const encoder = new TextEncoder();

/**
 * The script's payload: {"input_ids", "sampling_params", "stream": true, **extra}. Keys from --extra-request-body
 * override ours exactly as Python's dict merge does (same key order too).
 */
export function createBodyTemplate(p: {
  maxNewTokens: number;
  ignoreEos: boolean;
  extra: Record<string, unknown>;
}): BodyTemplate {
  const payload: Record<string, unknown> = {
    input_ids: IDS_MARK,
    sampling_params: { temperature: 0.0, max_new_tokens: p.maxNewTokens, ignore_eos: p.ignoreEos },
    stream: true,
    ...p.extra,
  };
  const json = JSON.stringify(payload);
  const mark = JSON.stringify(IDS_MARK);
  const at = json.indexOf(mark);
  if (at < 0) return { head: encoder.encode(json), tail: new Uint8Array(0), idsOverridden: true };
  return {
    head: encoder.encode(json.slice(0, at) + "["),
    tail: encoder.encode("]" + json.slice(at + mark.length)),
    idsOverridden: false,
  };
}

/** One request body: head + prefix digits [+ ","] + suffix digits + tail, in one allocation. */
export function buildBody(t: BodyTemplate, prefixDigits: Uint8Array, suffixDigits: Uint8Array): Uint8Array {
  if (t.idsOverridden) return t.head;
  const comma = prefixDigits.length > 0 && suffixDigits.length > 0 ? 1 : 0;
  const out = new Uint8Array(t.head.length + prefixDigits.length + comma + suffixDigits.length + t.tail.length);
  let at = 0;
  out.set(t.head, at);
  at += t.head.length;
  out.set(prefixDigits, at);
  at += prefixDigits.length;
  if (comma) out[at++] = 44; // ","
  out.set(suffixDigits, at);
  at += suffixDigits.length;
  out.set(t.tail, at);
  return out;
}

/** What the server tells about itself; every field optional because old versions say less. */
export interface ServerInfo {
  /** The endpoint that answered, or null when none did. */
  source: string | null;
  version: string | null;
  pageSize: number | null;
  /** True: text deltas (--incremental-streaming-output / --stream-output); false: cumulative; null: unknown. */
  incremental: boolean | null;
  contextLength: number | null;
  raw: Record<string, unknown> | null;
}

const asNumber = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** Reads /server_info (>= 0.5.6) or /get_server_info (older). Never throws for a missing endpoint. */
export async function fetchServerInfo(baseUrl: string, headers: Record<string, string> = {}): Promise<ServerInfo> {
  for (const path of ["/server_info", "/get_server_info"]) {
    let res: Response;
    try {
      res = await fetch(baseUrl + path, { headers, signal: AbortSignal.timeout(15_000) });
    } catch (err) {
      throw unreachable(baseUrl, err);
    }
    if (!res.ok) {
      await res.body?.cancel();
      continue;
    }
    let raw: Record<string, unknown>;
    try {
      raw = (await res.json()) as Record<string, unknown>;
    } catch {
      continue;
    }
    const inc = raw.incremental_streaming_output ?? raw.stream_output;
    return {
      source: path,
      version: typeof raw.version === "string" ? raw.version : null,
      pageSize: asNumber(raw.page_size),
      incremental: typeof inc === "boolean" ? inc : null,
      contextLength: asNumber(raw.context_length),
      raw,
    };
  }
  return { source: null, version: null, pageSize: null, incremental: null, contextLength: null, raw: null };
}

/** A clear one-line error for a server that cannot be reached at all. */
export function unreachable(baseUrl: string, err: unknown): BenchError {
  const e = err as { code?: string; message?: string };
  const why = e.code ?? e.message ?? String(err);
  return new BenchError(`cannot reach the server at ${baseUrl}: ${why}`);
}

/**
 * Checks that /generate exists before any pct starts: SGLang answers GET /generate with 405 (POST/PUT only);
 * a 404 means this is not an SGLang server (or the URL has a wrong path).
 */
export async function checkGenerateRoute(baseUrl: string, headers: Record<string, string> = {}): Promise<void> {
  let res: Response;
  try {
    res = await fetch(baseUrl + "/generate", { method: "GET", headers, signal: AbortSignal.timeout(15_000) });
  } catch (err) {
    throw unreachable(baseUrl, err);
  }
  await res.body?.cancel();
  if (res.status === 404) {
    throw new BenchError(`${baseUrl}/generate answered 404: this does not look like an SGLang server (check --base-url/--port)`);
  }
}

export interface FlushOptions {
  /** Give up after this long of 400 answers (the server stays busy). */
  deadlineS: number;
  /** Passed as ?timeout=: the server waits that long for idleness (>= 0.5.10; older ignore it). */
  serverTimeoutS: number;
  headers?: Record<string, string>;
  sleep?: (ms: number) => Promise<void>;
}

/** Result of a successful flush: how many attempts it took. */
export interface FlushResult {
  attempts: number;
}

/**
 * POST /flush_cache until it answers 200. A 400 means "busy" (requests still running, another flush):
 * retry with backoff until the deadline. Anything else is not going to get better: fail at once.
 */
export async function flushCache(baseUrl: string, o: FlushOptions): Promise<FlushResult> {
  const sleep = o.sleep ?? ((ms: number) => Bun.sleep(ms));
  const deadline = performance.now() + o.deadlineS * 1000;
  let backoffMs = 100;
  let lastBody = "";
  for (let attempt = 1; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(`${baseUrl}/flush_cache?timeout=${o.serverTimeoutS}`, {
        method: "POST",
        headers: o.headers,
        signal: AbortSignal.timeout((o.serverTimeoutS + 30) * 1000),
      });
    } catch (err) {
      throw unreachable(baseUrl, err);
    }
    const body = (await res.text()).trim();
    if (res.status === 200) return { attempts: attempt };
    if (res.status !== 400) {
      throw new BenchError(`POST /flush_cache answered ${res.status}${body ? `: ${body.slice(0, 200)}` : ""}`);
    }
    lastBody = body;
    if (performance.now() + backoffMs > deadline) {
      throw new BenchError(
        `POST /flush_cache kept answering 400 for ${o.deadlineS}s (${attempt} attempts; last: "${lastBody.slice(0, 120)}"): ` +
          "the server never became idle (see --flush-deadline)",
      );
    }
    await sleep(backoffMs);
    backoffMs = Math.min(backoffMs * 2, 2000);
  }
}
