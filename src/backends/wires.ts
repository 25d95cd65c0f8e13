/**
 * The three generation APIs a backend can speak, as pure adapters: the body every request of a pct shares (split
 * around its prompt), and the hot-path reading of its stream. Which engine is behind the URL (flush, preflight,
 * extra body keys) is the engine's business (engine.ts); a Backend is one engine speaking one wire.
 *
 * - generate: SGLang's native /generate, token ids, cumulative or delta text (docs/protocol.md §1);
 * - completions: OpenAI /v1/completions, token ids, text deltas (§3, §8);
 * - chat: OpenAI /v1/chat/completions, the prompt as the text its ids decode to, content deltas;
 * - completion: llama.cpp's native /completion, token ids in, content deltas and the generated ids out (§8).
 */
import { createTemplate, IDS_PLACEHOLDER, TEXT_PLACEHOLDER, type BodyTemplate } from "./body.ts";
import type { ByteRange } from "./json-bytes.ts";
import { extractOpenaiOutputIds, extractOpenaiText, locateOpenaiText, scanOpenaiEvent } from "./openai-events.ts";
import { extractLlamacppOutputIds, extractLlamacppText, locateLlamacppText, scanLlamacppEvent } from "./llamacpp-events.ts";
import { extractOutputIds, extractText, locateSglangText, scanSglangEvent } from "./sglang-events.ts";
import type { BodyParams, EndpointName, EventFields, EventKind, PromptEncoding } from "./types.ts";

/** One generation API: where it is, how its bodies look, how its events read. */
export interface Wire {
  endpoint: EndpointName;
  path: string;
  /** Every event's text is a delta whatever the server's mode. */
  deltaText: boolean;
  /** Its events carry the generated token ids (see Backend.carriesOutputIds). */
  carriesOutputIds: boolean;
  promptEncoding: PromptEncoding;
  /**
   * The body template: the wire's keys, then `engineKeys` (what the engine behind it needs, e.g. llama.cpp's
   * cache_prompt), then --extra-request-body, which overrides keys in place as a Python dict merge does.
   */
  bodyTemplate(p: BodyParams, engineKeys: Record<string, unknown>): BodyTemplate;
  scanEvent(payload: Uint8Array, out: EventFields): EventKind;
  extractText(payload: Uint8Array): string;
  locateText(payload: Uint8Array, out: ByteRange): void;
  /** The generated token ids one event carries (SGLang's output_ids, OpenAI's token_ids), null if none; a full parse. */
  extractOutputIds(payload: Uint8Array): number[] | null;
}

/** SGLang native: the script's payload {"input_ids", "sampling_params", "stream": true, **extra}. */
export const generateWire: Wire = {
  endpoint: "generate",
  path: "/generate",
  deltaText: false,
  carriesOutputIds: true,
  promptEncoding: "token_ids",
  bodyTemplate: (p) =>
    createTemplate({
      input_ids: IDS_PLACEHOLDER,
      sampling_params: { temperature: 0.0, max_new_tokens: p.maxNewTokens, ignore_eos: p.ignoreEos },
      stream: true,
      ...p.extra,
    }),
  scanEvent: scanSglangEvent,
  extractText,
  locateText: locateSglangText,
  extractOutputIds,
};

/**
 * The keys every OpenAI-style body shares after its prompt. continuous_usage_stats asks for the cumulative token
 * count on every chunk (vLLM, SGLang); servers that ignore it still work (openai-events.ts counts chunks).
 */
function openaiTail(p: BodyParams): Record<string, unknown> {
  return {
    max_tokens: p.maxNewTokens,
    temperature: 0,
    stream: true,
    stream_options: { include_usage: true, continuous_usage_stats: true },
    ignore_eos: p.ignoreEos,
  };
}

/** {"model"?, "prompt": [ids], "max_tokens", "temperature": 0, "stream": true, "stream_options", "ignore_eos", **extra}. */
export const completionsWire: Wire = {
  endpoint: "completions",
  path: "/v1/completions",
  deltaText: true,
  carriesOutputIds: false,
  promptEncoding: "token_ids",
  bodyTemplate: (p, engineKeys) =>
    createTemplate({ ...(p.model === null ? {} : { model: p.model }), prompt: IDS_PLACEHOLDER, ...openaiTail(p), ...engineKeys, ...p.extra }),
  scanEvent: scanOpenaiEvent,
  extractText: extractOpenaiText,
  locateText: locateOpenaiText,
  extractOutputIds: extractOpenaiOutputIds,
};

/**
 * {"model"?, "messages": [{"role": "user", "content": text}], ...the completions keys}: one user message whose
 * content is the prompt's text (no chat API takes token ids), so the server applies its chat template around it.
 */
const chatWire: Wire = {
  endpoint: "chat",
  path: "/v1/chat/completions",
  deltaText: true,
  carriesOutputIds: false,
  promptEncoding: "text",
  bodyTemplate: (p, engineKeys) =>
    createTemplate({
      ...(p.model === null ? {} : { model: p.model }),
      messages: [{ role: "user", content: TEXT_PLACEHOLDER }],
      ...openaiTail(p),
      ...engineKeys,
      ...p.extra,
    }),
  scanEvent: scanOpenaiEvent,
  extractText: extractOpenaiText,
  locateText: locateOpenaiText,
  extractOutputIds: extractOpenaiOutputIds,
};

/**
 * llama.cpp native: {"model"?, "prompt": [ids], "n_predict", "temperature": 0, "stream": true, "ignore_eos",
 * "return_tokens": true, ...the engine's keys, **extra}. return_tokens puts each streamed token's id in its event.
 */
const completionWire: Wire = {
  endpoint: "completion",
  path: "/completion",
  deltaText: true,
  carriesOutputIds: true,
  promptEncoding: "token_ids",
  bodyTemplate: (p, engineKeys) =>
    createTemplate({
      ...(p.model === null ? {} : { model: p.model }),
      prompt: IDS_PLACEHOLDER,
      n_predict: p.maxNewTokens,
      temperature: 0,
      stream: true,
      ignore_eos: p.ignoreEos,
      return_tokens: true,
      ...engineKeys,
      ...p.extra,
    }),
  scanEvent: scanLlamacppEvent,
  extractText: extractLlamacppText,
  locateText: locateLlamacppText,
  extractOutputIds: extractLlamacppOutputIds,
};

const WIRES: Readonly<Record<EndpointName, Wire>> = { generate: generateWire, completions: completionsWire, chat: chatWire, completion: completionWire };

/** The wire of an endpoint name. */
export function wireFor(endpoint: EndpointName): Wire {
  return WIRES[endpoint];
}
