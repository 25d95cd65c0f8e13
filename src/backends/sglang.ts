/**
 * SGLang native API outside the hot path: request bodies, preflight, cache flush.
 * Wire facts: shared/docs/protocol.md §1 (/generate), §2.1 (/flush_cache), §2.2 (info endpoints).
 */
import { BenchError } from "../errors.ts";
import { createTemplate, IDS_PLACEHOLDER, type BodyTemplate } from "./body.ts";
import { controlFetch, controlText, retryWhileBusy, type Control } from "./http.ts";
import { fetchServerInfo } from "./server-info.ts";
import { extractOutputIds, extractText, locateSglangText, scanSglangEvent } from "./sglang-events.ts";
import type { Backend, BodyParams, FlushOptions, FlushResult, PreflightInput, ServerProfile } from "./types.ts";

/** SGLang's body parameters; `model` is accepted for the Backend shape and ignored (native /generate has none). */
export type SglangBodyParams = Omit<BodyParams, "model"> & { model?: string | null };

/** SGLang's KV page size when the server does not say (its --page-size default). */
const DEFAULT_PAGE_SIZE = 1;

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

/**
 * Checks that /generate exists before any pct starts: SGLang answers GET /generate with 405 (POST/PUT only);
 * a 404 means this is not an SGLang server (or the URL has a wrong path).
 */
export async function checkGenerateRoute(ctl: Control): Promise<void> {
  const res = await controlFetch(ctl, "/generate", { timeoutMs: 15_000 });
  await res.body?.cancel();
  if (res.status === 404) {
    throw new BenchError(`${ctl.baseUrl}/generate answered 404: this does not look like an SGLang server (check --base-url/--port)`);
  }
}

/** /server_info for page size and text mode, then the /generate route. */
export async function preflightSglang(ctl: Control, p: PreflightInput): Promise<ServerProfile> {
  const info = await fetchServerInfo(ctl);
  await checkGenerateRoute(ctl);
  const warnings: string[] = [];
  if (info.source === null) warnings.push("the server has no /server_info: assuming cumulative text and page size 1 (see --page-size)");
  const pageSize = p.pageSize ?? info.pageSize ?? DEFAULT_PAGE_SIZE;
  return {
    info,
    model: null,
    pageSize,
    pageSizeSource: p.pageSize !== null ? "flag" : info.pageSize !== null ? "server" : "backend default",
    textMode: info.incremental === true ? "incremental" : "cumulative",
    warnings,
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

/** SGLang native `/generate`: cumulative or delta text per the server's mode, flush via POST /flush_cache. */
export const sglangBackend: Backend = {
  name: "sglang",
  generatePath: "/generate",
  deltaText: false,
  preflight: preflightSglang,
  createBodyTemplate,
  scanEvent: scanSglangEvent,
  extractText,
  locateText: locateSglangText,
  extractOutputIds,
  flush: flushCache,
};
