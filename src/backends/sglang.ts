/**
 * SGLang native API outside the hot path: request bodies, preflight, cache flush.
 * Wire facts: docs/protocol.md §1 (/generate), §2.1 (/flush_cache), §2.2 (info endpoints).
 */
import { BenchError } from "../errors.ts";
import type { BodyTemplate } from "./body.ts";
import { composeBackend, NO_BODY_KEYS, type EngineControl } from "./engine.ts";
import { controlFetch, controlText, retryWhileBusy, type Control } from "./http.ts";
import { discoverModel } from "./openai.ts";
import { fetchServerInfo } from "./server-info.ts";
import type { Backend, BodyParams, FlushOptions, FlushResult, PreflightInput, ServerProfile } from "./types.ts";
import { generateWire, type Wire } from "./wires.ts";

/** SGLang's body parameters; `model` is accepted for the Backend shape and ignored (native /generate has none). */
export type SglangBodyParams = Omit<BodyParams, "model"> & { model?: string | null };

/** SGLang's KV page size when the server does not say (its --page-size default). */
const DEFAULT_PAGE_SIZE = 1;

/**
 * The script's payload: {"input_ids", "sampling_params", "stream": true, **extra}. Keys from --extra-request-body
 * override ours exactly as Python's dict merge does (same key order too).
 */
export function createBodyTemplate(p: SglangBodyParams): BodyTemplate {
  return generateWire.bodyTemplate({ ...p, model: p.model ?? null }, {});
}

/**
 * Checks that /generate exists before any pct starts: SGLang answers GET /generate with 405 (POST/PUT only);
 * a 404 means this is not an SGLang server (or the URL has a wrong path).
 */
async function checkGenerateRoute(ctl: Control): Promise<void> {
  const res = await controlFetch(ctl, "/generate", { timeoutMs: 15_000 });
  await res.body?.cancel();
  if (res.status === 404) {
    throw new BenchError(`${ctl.baseUrl}/generate answered 404: this does not look like an SGLang server (check --base-url/--port)`);
  }
}

/**
 * /server_info for page size and text mode, then the /generate route (the very requests of warmbench 0.1, in its
 * order; answers engine detection already has are not asked again). Requests through SGLang's OpenAI-compatible
 * endpoints also need the served model name (/v1/models) and always stream text deltas.
 */
async function preflightSglang(ctl: Control, p: PreflightInput, wire: Wire = generateWire): Promise<ServerProfile> {
  const info = p.known?.info ?? (await fetchServerInfo(ctl));
  if (p.known?.generateRouteChecked !== true) await checkGenerateRoute(ctl);
  const warnings: string[] = [];
  if (info.source === null) {
    const assumed = wire.deltaText ? "page size 1" : "cumulative text and page size 1";
    warnings.push(`the server has no /server_info: assuming ${assumed} (see --page-size)`);
  }
  const pageSize = p.pageSize ?? info.pageSize ?? DEFAULT_PAGE_SIZE;
  const native = wire.endpoint === "generate";
  return {
    info,
    model: native ? null : (p.servedModelName ?? (await discoverModel(ctl))),
    pageSize,
    pageSizeSource: p.pageSize !== null ? "flag" : info.pageSize !== null ? "server" : "backend default",
    textMode: !native || info.incremental === true ? "incremental" : "cumulative",
    warnings,
    engine: { name: "sglang", source: "flag", evidence: info.version ? `SGLang ${info.version}` : "SGLang" },
    cacheSlots: null,
    maxRunning: null,
    flushGap: null,
  };
}

/**
 * POST /flush_cache until it answers 200. A 400 means "busy" (requests still running, another flush):
 * retry with backoff until the deadline. Anything else is not going to get better: fail at once.
 */
export async function flushCache(ctl: Control, o: FlushOptions): Promise<FlushResult> {
  return retryWhileBusy(
    { ...o, signal: ctl.signal },
    async () => {
      const path = `/flush_cache?timeout=${o.serverTimeoutS}`;
      const res = await controlFetch(ctl, path, { method: "POST", timeoutMs: (o.serverTimeoutS + 30) * 1000 });
      const body = (await controlText(ctl, res, path)).trim();
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

/** SGLang: native /generate by default, or its OpenAI-compatible endpoints; one radix cache; POST /flush_cache. */
export const sglangEngine: EngineControl = {
  engine: "sglang",
  name: "sglang",
  nativeEndpoint: "generate",
  endpoints: ["generate", "completions", "chat"],
  preflight: preflightSglang,
  flush: flushCache,
  bodyKeys: NO_BODY_KEYS,
};

/** SGLang native `/generate`: cumulative or delta text per the server's mode, flush via POST /flush_cache. */
export const sglangBackend: Backend = composeBackend(sglangEngine, generateWire);
