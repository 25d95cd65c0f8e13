/** Backend registry: the one place that maps a --backend name to its wire format. */
import { openaiBackend } from "./openai.ts";
import { sglangBackend } from "./sglang.ts";
import type { Backend } from "./types.ts";

/** Names accepted on the command line; "vllm" is an alias of "openai" (vLLM speaks /v1/completions). */
export type BackendChoice = "sglang" | "openai" | "vllm";

/** The backend object for a name. */
export function backendFor(name: BackendChoice): Backend {
  if (name === "sglang") return sglangBackend;
  return openaiBackend;
}
