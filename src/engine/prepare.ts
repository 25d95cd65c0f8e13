/**
 * What every measuring command (the sweep, multi-turn conversations) does before its first request, once its
 * outputs are opened (src/output/results-writer.ts, by the command line): load the tokenizer, settle the backend (named, or
 * detected by --backend auto) and preflight the server. Bad input is reported here, before anything is measured.
 */
import { controlHeaders } from "../config/options.ts";
import { log } from "../log.ts";
import type { RunOptions } from "../config/options.ts";
import { resolveBackend, type EndpointNeeds } from "../backends/index.ts";
import type { Backend, EngineInfo, ServerProfile } from "../backends/types.ts";
import type { Control } from "../backends/http.ts";
import { loadTokenizer, type LoadedTokenizer } from "../workload/tokenizer.ts";
import { withPassport } from "./passport-facts.ts";

/** The options prepareRun reads. */
export type PrepareOptions = Pick<
  RunOptions,
  | "baseUrl"
  | "apiKey"
  | "urlCredentials"
  | "tokenizer"
  | "revision"
  | "backend"
  | "endpoint"
  | "flush"
  | "verifyCache"
  | "pageSize"
  | "servedModelName"
  | "extraRequestBody"
> &
  Partial<Pick<RunOptions, "passport" | "maxControlBodyBytes">>;

export interface PreparedRun {
  ctl: Control;
  tokenizer: LoadedTokenizer;
  backend: Backend;
  server: ServerProfile;
}

/** `needs`: what the run reads from the stream (multi-turn: the generated ids), which settles `--endpoint auto`. */
export async function prepareRun(opts: PrepareOptions, signal: AbortSignal | undefined, needs: EndpointNeeds = {}): Promise<PreparedRun> {
  const ctl: Control = { baseUrl: opts.baseUrl, headers: controlHeaders(opts), signal, maxBodyBytes: opts.maxControlBodyBytes };
  // Bad input (a missing tokenizer file) is a usage error and is reported before anything is sent.
  log.info(`Loading tokenizer from ${opts.tokenizer} ...`);
  const tokenizer = await loadTokenizer(opts.tokenizer, { revision: opts.revision, signal });
  log.info(`Tokenizer loaded (vocab_size=${tokenizer.population.length}) from ${tokenizer.path}`);

  const resolved = await resolveBackend(ctl, opts.backend, opts.endpoint, needs);
  const backend = resolved.backend;
  if (resolved.engine.source === "detected")
    log.info(`Engine: ${backend.engine} (detected: ${resolved.engine.evidence}); requests go to ${backend.generatePath}`);
  ctl.freshConnections = backend.freshConnections;
  const checkFlush = opts.flush === "auto" && opts.verifyCache !== "off";
  const preflight = await backend.preflight(ctl, { pageSize: opts.pageSize, servedModelName: opts.servedModelName, checkFlush, known: resolved.known });
  const server: ServerProfile = withPassport({ ...preflight, engine: engineOf(backend, preflight, resolved.engine) }, opts.passport, opts.baseUrl);
  for (const warning of server.warnings) log.warn(warning);
  return { ctl, tokenizer, backend, server };
}

function engineOf(backend: Backend, server: ServerProfile, how: Pick<EngineInfo, "source" | "evidence">): EngineInfo {
  const name = server.engine?.name ?? backend.engine;
  return { name, source: how.source, evidence: how.source === "detected" ? how.evidence : (server.engine?.evidence ?? how.evidence) };
}
