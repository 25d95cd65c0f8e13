/**
 * `--backend auto`: which engine is behind the URL, from the endpoints only it has (docs/protocol.md §2.2, §3.3, §8):
 *
 *   SGLang     GET /server_info (or /get_server_info), and GET /generate exists (405: it takes POST only);
 *   llama.cpp  GET /props answers with total_slots;
 *   vLLM       GET /version answers {"version": ...} (and /v1/models, which its preflight reads);
 *   otherwise  any server whose GET /v1/models answers: a generic OpenAI-compatible one.
 *
 * SGLang is asked first and with exactly the requests its own preflight sends, which then reuses the answers: a
 * run against SGLang sends the same requests in the same order whether the backend was detected or named. A server
 * that describes itself as SGLang at /server_info but has no /generate, or that nothing else claims while its
 * /generate is not a 404 (all of it behind a key), gets what --backend sglang gives it: SGLang's own error, or an
 * SGLang run.
 */
import { BenchError } from "../errors.ts";
import type { EngineControl } from "./engine.ts";
import { controlFetch, controlText, type Control } from "./http.ts";
import { isObject } from "./json.ts";
import { llamacppEngine } from "./llamacpp.ts";
import { fetchProps, slotCountOf } from "./llamacpp-slots.ts";
import { openaiEngine, vllmEngine } from "./openai.ts";
import { fetchServerInfo } from "./server-info.ts";
import { sglangEngine } from "./sglang.ts";
import type { KnownServer, ServerInfo } from "./types.ts";

/** The engine found, the answers that identified it, and what its preflight may reuse. */
export interface Detection {
  engine: EngineControl;
  evidence: string;
  known: KnownServer;
}

const TIMEOUT_MS = 15_000;

async function statusOf(ctl: Control, path: string): Promise<{ status: number; body: string }> {
  const res = await controlFetch(ctl, path, { timeoutMs: TIMEOUT_MS });
  return { status: res.status, body: await controlText(ctl, res, path) };
}

export async function detectEngine(ctl: Control): Promise<Detection> {
  const info = await fetchServerInfo(ctl);
  const generate = await controlFetch(ctl, "/generate", { timeoutMs: TIMEOUT_MS });
  await generate.body?.cancel();
  // 405 is SGLang's route refusing GET; a server that also describes itself at /server_info and has a /generate
  // route of any other kind (401 behind a key) is SGLang too. vLLM's dev mode has /server_info but no /generate.
  if (generate.status === 405 || (generate.status !== 404 && info.source !== null)) {
    const version = info.version ? `, ${info.source} version ${info.version}` : "";
    return { engine: sglangEngine, evidence: `GET /generate answered ${generate.status}${version}`, known: { info, generateRouteChecked: true } };
  }
  if (generate.status === 404 && looksLikeSglang(info)) throw notSglang(ctl);
  const props = await fetchProps(ctl);
  if (props !== null && slotCountOf(props) !== null) {
    const build = typeof props.build_info === "string" ? `, build ${props.build_info}` : "";
    return { engine: llamacppEngine, evidence: `GET /props lists ${slotCountOf(props)} slot(s)${build}`, known: { info, props } };
  }
  const version = await statusOf(ctl, "/version");
  const vllmVersion = version.status === 200 ? versionOf(version.body) : null;
  if (vllmVersion !== null) return { engine: vllmEngine, evidence: `GET /version answered ${vllmVersion}`, known: { info } };
  const models = await statusOf(ctl, "/v1/models");
  if (models.status === 200) return { engine: openaiEngine, evidence: "GET /v1/models answered; no engine-specific endpoint", known: { info } };
  if (generate.status !== 404) {
    return { engine: sglangEngine, evidence: `GET /generate answered ${generate.status}; nothing else answered`, known: { info, generateRouteChecked: true } };
  }
  throw new BenchError(
    `${ctl.baseUrl}/generate answered 404: this does not look like an SGLang server, nor like llama.cpp (no /props), ` +
      `vLLM (no /version) or an OpenAI-compatible server (/v1/models answered ${models.status}) (check --base-url/--port)`,
  );
}

/** SGLang's ServerArgs at /server_info (vLLM's dev-mode /server_info holds a vllm_config instead). */
function looksLikeSglang(info: ServerInfo): boolean {
  return info.raw !== null && "model_path" in info.raw && "page_size" in info.raw;
}

/** The error --backend sglang gives a server without /generate (sglang.ts checkGenerateRoute). */
function notSglang(ctl: Control): BenchError {
  return new BenchError(`${ctl.baseUrl}/generate answered 404: this does not look like an SGLang server (check --base-url/--port)`);
}

function versionOf(body: string): string | null {
  try {
    const parsed: unknown = JSON.parse(body);
    return isObject(parsed) && typeof parsed.version === "string" ? parsed.version : null;
  } catch {
    return null;
  }
}
