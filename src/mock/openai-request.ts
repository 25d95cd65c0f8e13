/**
 * Validation of a POST /v1/completions body as vLLM checks it (docs/protocol.md §3.2), for token-id prompts
 * only, and of a POST /v1/chat/completions body, whose messages become ids through the mock's chat template and
 * tokenizer (chat-template.ts). Errors use vLLM's envelope {"error":{message,type,param,code}}. llama.cpp's
 * id_slot and cache_prompt are read too.
 */
import { applyChatTemplate, type ChatMessage, type MockTokenizer } from "./chat-template.ts";

/** A completions request the mock accepted. */
export interface CompletionParams {
  /** The requested model name, or null when the body has none. */
  model: string | null;
  inputIds: number[];
  maxTokens: number;
  temperature: number;
  ignoreEos: boolean;
  stream: boolean;
  /** stream_options.include_usage: a final usage chunk. */
  includeUsage: boolean;
  /** stream_options.continuous_usage_stats: usage on every chunk. */
  continuousUsage: boolean;
  /** llama.cpp's id_slot (-1 or absent: null). */
  idSlot: number | null;
  /** llama.cpp's cache_prompt (default true). */
  cachePrompt: boolean;
  /** llama.cpp's return_tokens (native /completion): each event carries its token's id. */
  returnTokens: boolean;
  /** Top log-probabilities asked for: OpenAI's integer `logprobs`, llama.cpp's `n_probs`; null: none. */
  logprobs: number | null;
  /** vLLM's return_tokens_as_token_ids: logprob tokens written `token_id:N`. */
  tokensAsIds: boolean;
}

/** Accepted, or the status and body vLLM would answer. */
export type ParsedCompletion = { ok: true; params: CompletionParams } | { ok: false; status: number; body: unknown };

/** What the parser needs to know about the served model. */
export interface CompletionLimits {
  modelName: string;
  vocabSize: number;
  contextLength: number;
  /** Accept any model name (llama.cpp serves its one model whatever the request says). */
  anyModel?: boolean;
}

const DEFAULT_MAX_TOKENS = 16;

/** vLLM's error envelope (since PR #22099). */
export function openaiError(message: string, type: string, code: number, param: string | null = null): unknown {
  return { error: { message, type, param, code } };
}

const badRequest = (message: string, param: string | null = null): ParsedCompletion => ({
  ok: false,
  status: 400,
  body: openaiError(message, "BadRequestError", 400, param),
});

/** Parse and validate a /v1/completions body. */
export function parseCompletionBody(bodyText: string, limits: CompletionLimits): ParsedCompletion {
  return parseOpenaiBody(bodyText, limits, (b) => promptIds(b.prompt, limits.vocabSize));
}

/** Parse and validate a llama.cpp native /completion body: token ids, and n_predict (max_tokens also taken) as its length. */
export function parseNativeCompletionBody(bodyText: string, limits: CompletionLimits): ParsedCompletion {
  return parseOpenaiBody(bodyText, limits, (b) => promptIds(b.prompt, limits.vocabSize), "n_predict");
}

/** Parse and validate a /v1/chat/completions body: its messages, templated and tokenized, are the prompt. */
export function parseChatBody(bodyText: string, limits: CompletionLimits, tokenizer: MockTokenizer): ParsedCompletion {
  return parseOpenaiBody(bodyText, limits, (b) => {
    const messages = chatMessages(b.messages);
    if (typeof messages === "string") return messages;
    const ids = tokenizer.encode(applyChatTemplate(messages));
    return ids.length === 0 ? "messages must not be empty." : ids;
  });
}

function chatMessages(value: unknown): ChatMessage[] | string {
  if (!Array.isArray(value) || value.length === 0) return "messages must be a non-empty list.";
  const out: ChatMessage[] = [];
  for (const m of value) {
    if (typeof m !== "object" || m === null || typeof (m as ChatMessage).role !== "string" || typeof (m as ChatMessage).content !== "string") {
      return "each message needs a string role and a string content (the mock takes text content only).";
    }
    out.push({ role: (m as ChatMessage).role, content: (m as ChatMessage).content });
  }
  return out;
}

function parseOpenaiBody(
  bodyText: string,
  limits: CompletionLimits,
  promptOf: (b: Record<string, unknown>) => number[] | string,
  lengthKey: "max_tokens" | "n_predict" = "max_tokens",
): ParsedCompletion {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch (err) {
    return badRequest(`Invalid JSON body: ${(err as Error).message}`);
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return badRequest("The request body must be a JSON object.");
  const b = body as Record<string, unknown>;
  const model = b.model ?? null;
  if (model !== null && typeof model !== "string") return badRequest("model must be a string.", "model");
  if (model !== null && model !== limits.modelName && limits.anyModel !== true) {
    return { ok: false, status: 404, body: openaiError(`The model \`${model}\` does not exist.`, "NotFoundError", 404, "model") };
  }
  const prompt = promptOf(b);
  if (typeof prompt === "string") return badRequest(prompt, "prompt");

  const stream = b.stream ?? false;
  if (typeof stream !== "boolean") return badRequest("stream must be a boolean.", "stream");
  const options = b.stream_options ?? null;
  if (options !== null) {
    if (stream !== true) return badRequest("Stream options can only be defined when `stream=True`.", "stream_options");
    if (typeof options !== "object" || Array.isArray(options)) return badRequest("stream_options must be an object.", "stream_options");
  }
  const includeUsage = (options as Record<string, unknown> | null)?.include_usage ?? false;
  const continuousUsage = (options as Record<string, unknown> | null)?.continuous_usage_stats ?? false;
  if (typeof includeUsage !== "boolean" || typeof continuousUsage !== "boolean") {
    return badRequest("stream_options values must be booleans.", "stream_options");
  }

  // null asks for the rest of the context, as vLLM does; llama.cpp takes max_tokens beside its own n_predict.
  const length = b[lengthKey] ?? b.max_tokens;
  const maxTokens = length === null ? limits.contextLength - prompt.length : (length ?? DEFAULT_MAX_TOKENS);
  if (typeof maxTokens !== "number" || !Number.isInteger(maxTokens) || maxTokens < 1) {
    return badRequest(`${lengthKey} must be an integer of at least 1, got ${JSON.stringify(length)}.`, lengthKey);
  }
  const temperature = b.temperature ?? 1.0;
  if (typeof temperature !== "number" || !Number.isFinite(temperature) || temperature < 0) {
    return badRequest("temperature must be a non-negative number.", "temperature");
  }
  const ignoreEos = b.ignore_eos ?? false;
  if (typeof ignoreEos !== "boolean") return badRequest("ignore_eos must be a boolean.", "ignore_eos");
  const idSlot = b.id_slot ?? -1;
  if (typeof idSlot !== "number" || !Number.isInteger(idSlot)) return badRequest("id_slot must be an integer.", "id_slot");
  const cachePrompt = b.cache_prompt ?? true;
  if (typeof cachePrompt !== "boolean") return badRequest("cache_prompt must be a boolean.", "cache_prompt");
  const logprobs = b.logprobs ?? b.n_probs ?? null;
  if (logprobs !== null && (typeof logprobs !== "number" || !Number.isInteger(logprobs) || logprobs < 0)) {
    return badRequest("logprobs must be a non-negative integer.", lengthKey === "n_predict" ? "n_probs" : "logprobs");
  }
  return {
    ok: true,
    params: {
      model,
      inputIds: prompt,
      maxTokens,
      temperature,
      ignoreEos,
      stream,
      includeUsage,
      continuousUsage,
      idSlot: idSlot < 0 ? null : idSlot,
      cachePrompt,
      returnTokens: b.return_tokens === true,
      logprobs: logprobs === 0 ? null : logprobs,
      tokensAsIds: b.return_tokens_as_token_ids === true,
    },
  };
}

/** The prompt's token ids, or the message of a 400. A one-prompt batch ([[...]]) is unwrapped. */
function promptIds(value: unknown, vocabSize: number): number[] | string {
  if (typeof value === "string" || (Array.isArray(value) && typeof value[0] === "string")) return "mock needs token ids";
  if (!Array.isArray(value)) return "prompt must be a list of token ids.";
  const ids: unknown[] = value.length === 1 && Array.isArray(value[0]) ? value[0] : value;
  if (ids.length === 0) return "Prompt cannot be empty.";
  if (Array.isArray(ids[0])) return "The mock takes one prompt per request.";
  for (const id of ids) {
    if (typeof id !== "number" || !Number.isInteger(id) || id < 0) return `prompt: token ids must be non-negative integers, got ${JSON.stringify(id)}.`;
    if (id >= vocabSize) return `Token id ${id} is out of vocabulary`;
  }
  return ids as number[];
}
