/** SGLang's self-description (/server_info, older /get_server_info); other servers simply lack it. */
import { controlFetch, controlText, type Control } from "./http.ts";
import type { ServerInfo } from "./types.ts";

const asNumber = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);

/** The answer of a server without either endpoint. */
export const NO_SERVER_INFO: ServerInfo = {
  source: null,
  version: null,
  pageSize: null,
  incremental: null,
  contextLength: null,
  maxReqInputLen: null,
  cacheCapacityTokens: null,
  hostCacheCapacityTokens: null,
  raw: null,
};

/**
 * The HiCache host pool in tokens: ServerArgs hicache_ratio x the device pool, unless hicache_size (GB) sets it,
 * which cannot be turned into tokens here; null without --enable-hierarchical-cache.
 */
function hostCapacity(raw: Record<string, unknown>, deviceTokens: number | null): number | null {
  if (raw.enable_hierarchical_cache !== true || deviceTokens === null) return null;
  const sizeGb = asNumber(raw.hicache_size);
  const ratio = asNumber(raw.hicache_ratio);
  if ((sizeGb !== null && sizeGb > 0) || ratio === null) return null;
  return Math.round(ratio * deviceTokens);
}

/**
 * Reads /server_info (>= 0.5.6) or /get_server_info (older). Never throws for a missing endpoint; throws a BenchError
 * for an answer over MAX_CONTROL_BODY_BYTES.
 */
export async function fetchServerInfo(ctl: Control): Promise<ServerInfo> {
  for (const path of ["/server_info", "/get_server_info"]) {
    const res = await controlFetch(ctl, path, { timeoutMs: 15_000 });
    if (!res.ok) {
      await res.body?.cancel();
      continue;
    }
    // Read within the control calls' limit: a body past it is one clear error, not memory grown without end.
    const text = await controlText(ctl, res, path);
    let raw: Record<string, unknown>;
    try {
      raw = JSON.parse(text) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) continue;
    const inc = raw.incremental_streaming_output ?? raw.stream_output;
    const deviceTokens = asNumber(raw.max_total_num_tokens);
    return {
      source: path,
      version: typeof raw.version === "string" ? raw.version : null,
      pageSize: asNumber(raw.page_size),
      incremental: typeof inc === "boolean" ? inc : null,
      contextLength: asNumber(raw.context_length),
      maxReqInputLen: asNumber(raw.max_req_input_len),
      cacheCapacityTokens: deviceTokens,
      hostCacheCapacityTokens: hostCapacity(raw, deviceTokens),
      raw,
    };
  }
  return NO_SERVER_INFO;
}
