/**
 * Backend registry: the one place that maps --backend and --endpoint to an engine speaking a wire, and that runs
 * engine detection for --backend auto. Nothing outside src/backends branches on a backend's name.
 */
import { BenchError } from "../errors.ts";
import { detectEngine } from "./detect.ts";
import { composeBackend, type EngineControl } from "./engine.ts";
import type { Control } from "./http.ts";
import { llamacppBackend, llamacppEngine } from "./llamacpp.ts";
import { openaiBackend, openaiEngine, vllmEngine } from "./openai.ts";
import { sglangBackend, sglangEngine } from "./sglang.ts";
import type { Backend, EndpointName, EngineInfo, KnownServer } from "./types.ts";
import { wireFor } from "./wires.ts";

/** Engines by --backend name; "auto" asks the server (detect.ts). */
export const ENGINES = { sglang: sglangEngine, openai: openaiEngine, vllm: vllmEngine, llamacpp: llamacppEngine } as const;

/** Names accepted on the command line. */
export type BackendChoice = keyof typeof ENGINES | "auto";
/** "auto": the engine's own generation API (SGLang's /generate, /v1/completions elsewhere). */
export type EndpointChoice = EndpointName | "auto";

/** What the run needs of the stream beyond timing: `outputIds` makes `auto` the endpoint that returns them. */
export interface EndpointNeeds {
  outputIds?: boolean;
}

const composed = new Map<string, Backend>([
  ["sglang/generate", sglangBackend],
  ["openai/completions", openaiBackend],
  ["llamacpp/completions", llamacppBackend],
]);

/** The endpoint `choice` means for `engine`, or a one-line reason it cannot be used with it. */
export function endpointFor(engine: EngineControl, choice: EndpointChoice, needs: EndpointNeeds = {}): EndpointName | string {
  const auto = needs.outputIds === true ? (engine.idsEndpoint ?? engine.nativeEndpoint) : engine.nativeEndpoint;
  const endpoint = choice === "auto" ? auto : choice;
  if (engine.endpoints.includes(endpoint)) return endpoint;
  return `${engine.engine} has no ${endpoint === "generate" ? "SGLang-native /generate" : endpoint} endpoint (choose from: ${engine.endpoints.join(", ")})`;
}

/** The backend of a named engine and endpoint (the same object for the same pair). */
export function backendFor(name: Exclude<BackendChoice, "auto">, endpoint: EndpointChoice = "auto", needs: EndpointNeeds = {}): Backend {
  const engine = ENGINES[name];
  const resolved = endpointFor(engine, endpoint, needs);
  if (!isEndpoint(resolved)) throw new BenchError(`--endpoint ${endpoint}: ${resolved}`);
  const key = `${name}/${resolved}`;
  let backend = composed.get(key);
  if (backend === undefined) {
    backend = composeBackend(engine, wireFor(resolved));
    composed.set(key, backend);
  }
  return backend;
}

const isEndpoint = (v: string): v is EndpointName => v === "generate" || v === "completions" || v === "chat" || v === "completion";

/** The backend a run uses, how its engine was settled, and what detection already asked the server. */
export interface ResolvedBackend {
  backend: Backend;
  engine: Pick<EngineInfo, "source" | "evidence">;
  known: KnownServer;
}

/** --backend NAME as named; --backend auto by asking the server (see detect.ts). */
export async function resolveBackend(ctl: Control, choice: BackendChoice, endpoint: EndpointChoice, needs: EndpointNeeds = {}): Promise<ResolvedBackend> {
  if (choice !== "auto") return { backend: backendFor(choice, endpoint, needs), engine: { source: "flag", evidence: `--backend ${choice}` }, known: {} };
  const found = await detectEngine(ctl);
  const resolved = endpointFor(found.engine, endpoint, needs);
  if (!isEndpoint(resolved)) throw new BenchError(`--endpoint ${endpoint}: the server is ${found.engine.engine} (${found.evidence}), and ${resolved}`);
  return { backend: backendFor(found.engine.name, resolved), engine: { source: "detected", evidence: found.evidence }, known: found.known };
}
