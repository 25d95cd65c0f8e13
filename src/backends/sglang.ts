/**
 * SGLang native API outside the hot path: request bodies, cache flush, server info and preflight.
 * Wire facts: shared/docs/protocol.md §1 (/generate), §2.1 (/flush_cache), §2.2 (info endpoints).
 */
import { BenchError } from "../errors.ts";
import { createTemplate, IDS_PLACEHOLDER, type BodyTemplate } from "./body.ts";
import { fetchOrThrow, retryWhileBusy, unreachable } from "./http.ts";
import { extractText, locateSglangText, scanSglangEvent } from "./sglang-events.ts";
import type { Backend, BodyParams, FlushOptions, FlushResult } from "./types.ts";

/** SGLang's body parameters; `model` is accepted for the Backend shape and ignored (native /generate has none). */
export type SglangBodyParams = Omit<BodyParams, "model"> & { model?: string | null };

/**
 * The script's payload: {"input_ids", "sampling_params", "stream": true, **extra}. Keys from --extra-request-body
 * override ours exactly as Python's dict merge does (same key order too).
 */
export function createBodyTemplate(p: SglangBodyParams): BodyTemplate {
  return createTemplate({
    input_ids: IDS_PLACEHOLDER,
    sampling_params: { temperature: 0.0, max_new_tokens: p.maxNewTokens, ignore_eos: p.ignoreEos },
    stream: true,
    ...p.extra,
  });
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
    const res = await fetchOrThrow(baseUrl, path, { headers, signal: AbortSignal.timeout(15_000) });
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

/**
 * Checks that /generate exists before any pct starts: SGLang answers GET /generate with 405 (POST/PUT only);
 * a 404 means this is not an SGLang server (or the URL has a wrong path).
 */
export async function checkGenerateRoute(baseUrl: string, headers: Record<string, string> = {}): Promise<void> {
  const res = await fetchOrThrow(baseUrl, "/generate", { method: "GET", headers, signal: AbortSignal.timeout(15_000) });
  await res.body?.cancel();
  if (res.status === 404) {
    throw new BenchError(`${baseUrl}/generate answered 404: this does not look like an SGLang server (check --base-url/--port)`);
  }
}

/**
 * POST /flush_cache until it answers 200. A 400 means "busy" (requests still running, another flush):
 * retry with backoff until the deadline. Anything else is not going to get better: fail at once.
 */
export async function flushCache(baseUrl: string, o: FlushOptions): Promise<FlushResult> {
  return retryWhileBusy(
    o,
    async () => {
      const res = await fetchOrThrow(baseUrl, `/flush_cache?timeout=${o.serverTimeoutS}`, {
        method: "POST",
        headers: o.headers,
        signal: AbortSignal.timeout((o.serverTimeoutS + 30) * 1000),
      });
      const body = (await res.text()).trim();
      if (res.status === 200) return null;
      if (res.status !== 400) {
        throw new BenchError(`POST /flush_cache answered ${res.status}${body ? `: ${body.slice(0, 200)}` : ""}`);
      }
      return body;
    },
    (attempts, last) =>
      new BenchError(
        `POST /flush_cache kept answering 400 for ${o.deadlineS}s (${attempts} attempts; last: "${last.slice(0, 120)}"): ` +
          "the server never became idle (see --flush-deadline)",
      ),
  );
}

/** SGLang native `/generate`: cumulative or delta text per the server's mode, flush via POST /flush_cache. */
export const sglangBackend: Backend = {
  name: "sglang",
  generatePath: "/generate",
  deltaText: false,
  createBodyTemplate,
  scanEvent: scanSglangEvent,
  extractText,
  locateText: locateSglangText,
  flush: flushCache,
};
