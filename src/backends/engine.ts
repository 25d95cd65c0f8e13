/**
 * A Backend is one engine speaking one wire: the engine owns what depends on the server behind the URL (preflight,
 * flush, the body keys it needs, its cache layout), the wire owns the bytes of requests and events (wires.ts).
 * composeBackend puts them together into the flat Backend the sweep and the client use.
 */
import type { Control } from "./http.ts";
import type { Wire } from "./wires.ts";
import type { Backend, BackendName, BodyParams, EndpointName, EngineName, FlushOptions, FlushResult, PreflightInput, ServerProfile } from "./types.ts";

/** What one engine brings to a Backend. */
export interface EngineControl {
  engine: EngineName;
  /** The --backend name it is chosen by (the pct line's `backend`). */
  name: BackendName;
  /** The endpoint `--endpoint auto` means: the engine's own generation API. */
  nativeEndpoint: EndpointName;
  /**
   * The endpoint multi-turn's `auto` means, where the native one's stream lacks the generated ids (llama.cpp:
   * /completion with return_tokens, while the sweep keeps /v1/completions); absent: nativeEndpoint.
   */
  idsEndpoint?: EndpointName;
  /** Endpoints the engine serves; another is refused before anything is sent. */
  endpoints: readonly EndpointName[];
  /** Checks the server and settles everything the sweep needs; `wire` says which API the requests will use. */
  preflight(ctl: Control, p: PreflightInput, wire: Wire): Promise<ServerProfile>;
  flush(ctl: Control, o: FlushOptions): Promise<FlushResult>;
  /** Keys the engine needs in an OpenAI-style body (llama.cpp: cache_prompt, id_slot); SGLang native takes none. */
  bodyKeys(p: BodyParams): Record<string, unknown>;
  /** See Backend.freshConnections. */
  freshConnections?: boolean;
}

/** The Backend of `engine` speaking `wire`. */
export function composeBackend(engine: EngineControl, wire: Wire): Backend {
  return {
    name: engine.name,
    engine: engine.engine,
    endpoint: wire.endpoint,
    promptEncoding: wire.promptEncoding,
    generatePath: wire.path,
    freshConnections: engine.freshConnections === true,
    deltaText: wire.deltaText,
    carriesOutputIds: wire.carriesOutputIds,
    createBodyTemplate: (p) => wire.bodyTemplate(p, engine.bodyKeys(p)),
    scanEvent: wire.scanEvent,
    extractText: wire.extractText,
    locateText: wire.locateText,
    extractOutputIds: wire.extractOutputIds,
    preflight: (ctl, p) => engine.preflight(ctl, p, wire),
    flush: (ctl, o) => engine.flush(ctl, o),
  };
}

/** No extra body keys. */
export const NO_BODY_KEYS = (): Record<string, unknown> => ({});
