/**
 * vLLM and any other OpenAI-compatible server (`/v1/completions` with token ids, or `/v1/chat/completions`):
 * preflight, and the cache flush by vLLM's POST /reset_prefix_cache. Wire facts: docs/protocol.md §3
 * (completions), §3.3 (vLLM /reset_prefix_cache), §7 (quirks).
 */
import { BenchError } from "../errors.ts";
import type { BodyTemplate } from "./body.ts";
import { composeBackend, NO_BODY_KEYS, type EngineControl } from "./engine.ts";
import { controlFetch, controlText, retryWhileBusy, type Control } from "./http.ts";
import { isObject } from "./json.ts";
import { fetchServerInfo } from "./server-info.ts";
import type { Backend, BodyParams, EngineName, FlushOptions, FlushResult, PreflightInput, ServerProfile } from "./types.ts";
import { completionsWire, type Wire } from "./wires.ts";

/** vLLM's default KV block size, used when neither --page-size nor the server says otherwise. */
const DEFAULT_PAGE_SIZE = 16;

/**
 * {"model"?, "prompt": [ids], "max_tokens", "temperature": 0, "stream": true, "stream_options", "ignore_eos",
 * **extra}. continuous_usage_stats asks for the cumulative token count on every chunk (vLLM, SGLang); servers
 * that ignore it still work (openai-events.ts counts chunks). `model` is left out when null.
 */
export function createOpenaiBodyTemplate(p: BodyParams): BodyTemplate {
  return completionsWire.bodyTemplate(p, {});
}

const NOT_DEV_MODE = "POST /reset_prefix_cache answered 404: the server needs VLLM_SERVER_DEV_MODE=1 to reset its prefix cache (or use --flush none)";

/**
 * vLLM's POST /reset_prefix_cache (dev mode only). New servers answer {"success": bool}, and false means blocks
 * are still held (running requests, async offload): retry with backoff until the deadline. Old servers answer
 * 200 with an empty body and no check; that counts as success.
 */
export async function resetPrefixCache(ctl: Control, o: FlushOptions): Promise<FlushResult> {
  return retryWhileBusy(
    { ...o, signal: ctl.signal },
    async () => {
      // reset_external also empties KV-connector tiers (CPU/disk offload): a warm-cache study needs all of them
      // empty. Servers without the parameter ignore it.
      const path = "/reset_prefix_cache?reset_external=true";
      const res = await controlFetch(ctl, path, { method: "POST", timeoutMs: (o.serverTimeoutS + 30) * 1000 });
      const body = (await controlText(ctl, res, path)).trim();
      if (res.status === 404) throw new BenchError(NOT_DEV_MODE);
      if (res.status !== 200) {
        throw new BenchError(`POST /reset_prefix_cache answered ${res.status}${body ? `: ${body.slice(0, 200)}` : ""}`);
      }
      return reportsFailure(body) ? body : null;
    },
    (attempts) =>
      new BenchError(
        `POST /reset_prefix_cache kept answering {"success": false} for ${o.deadlineS}s (${attempts} attempts): ` +
          "the server still holds cache blocks (see --flush-deadline)",
      ),
  );
}

/** True only for an explicit {"success": false}; empty or other bodies are old servers' success. */
function reportsFailure(body: string): boolean {
  if (body === "") return false;
  try {
    const parsed: unknown = JSON.parse(body);
    return isObject(parsed) && parsed.success === false;
  } catch {
    return false;
  }
}

/** The entries of GET /v1/models (`data`); a BenchError when it does not answer a list. */
export async function listModels(ctl: Control): Promise<Record<string, unknown>[]> {
  const res = await controlFetch(ctl, "/v1/models", { timeoutMs: 15_000 });
  const body = await controlText(ctl, res, "/v1/models");
  if (res.status !== 200) {
    throw new BenchError(`GET /v1/models answered ${res.status}${body ? `: ${body.trim().slice(0, 200)}` : ""} (pass --served-model-name)`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new BenchError(`GET /v1/models did not answer JSON: ${body.slice(0, 100)} (pass --served-model-name)`);
  }
  const data = isObject(parsed) && Array.isArray(parsed.data) ? (parsed.data as unknown[]) : [];
  return data.filter(isObject);
}

/** The served model name: the first `data[].id` of GET /v1/models; a BenchError when there is none. */
export async function discoverModel(ctl: Control): Promise<string> {
  return modelIdOf(await listModels(ctl));
}

/** The first non-empty `id` of /v1/models entries; a BenchError when there is none. */
export function modelIdOf(models: readonly Record<string, unknown>[]): string {
  for (const entry of models) {
    if (typeof entry.id === "string" && entry.id !== "") return entry.id;
  }
  throw new BenchError("GET /v1/models listed no model (pass --served-model-name)");
}

/**
 * The served model name (asked of /v1/models unless given), and the page size: --page-size, else /server_info where
 * the server has one (SGLang's OpenAI server), else vLLM's block size 16 with a warning.
 */
async function preflightOpenai(ctl: Control, p: PreflightInput, engine: EngineName = "openai"): Promise<ServerProfile> {
  const info = p.known?.info ?? (await fetchServerInfo(ctl));
  const model = p.servedModelName ?? (await discoverModel(ctl));
  const warnings: string[] = [];
  if (p.pageSize === null && info.pageSize === null) {
    warnings.push(`page size unknown: assuming vLLM's block size ${DEFAULT_PAGE_SIZE} for the expected cached tokens (see --page-size)`);
  }
  return {
    info,
    model,
    pageSize: p.pageSize ?? info.pageSize ?? DEFAULT_PAGE_SIZE,
    pageSizeSource: p.pageSize !== null ? "flag" : info.pageSize !== null ? "server" : "backend default",
    textMode: "incremental",
    warnings,
    engine: { name: engine, source: "flag", evidence: info.version ? `version ${info.version}` : "OpenAI-compatible API" },
    cacheSlots: null,
    maxRunning: null,
    flushGap: null,
  };
}

/** Generic OpenAI-compatible server (and `--backend openai`): vLLM's reset where it exists. */
export const openaiEngine: EngineControl = {
  engine: "openai",
  name: "openai",
  nativeEndpoint: "completions",
  endpoints: ["completions", "chat"],
  preflight: (ctl, p, _wire: Wire) => preflightOpenai(ctl, p, "openai"),
  flush: resetPrefixCache,
  bodyKeys: NO_BODY_KEYS,
};

/** vLLM: the OpenAI-compatible API, block-granular cache (16 by default), POST /reset_prefix_cache in dev mode. */
export const vllmEngine: EngineControl = {
  ...openaiEngine,
  engine: "vllm",
  name: "vllm",
  preflight: (ctl, p, _wire: Wire) => preflightOpenai(ctl, p, "vllm"),
};

/** OpenAI-compatible `/v1/completions`: text is always a delta; flush via vLLM's POST /reset_prefix_cache. */
export const openaiBackend: Backend = composeBackend(openaiEngine, completionsWire);
