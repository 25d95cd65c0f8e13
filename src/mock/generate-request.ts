/**
 * Validation of a /generate body, mirroring where SGLang rejects what (docs/protocol.md §1.1, §1.2, §1.5):
 * body-shape problems are pydantic errors (400 before any stream), semantic ones are ValueErrors
 * (400 non-streaming, 200 + error event when streaming). The mock's own code: nothing shared with the client.
 */

/** A /generate request the mock accepted for scheduling. */
export interface GenerateParams {
  inputIds: number[];
  maxNewTokens: number;
  temperature: number;
  ignoreEos: boolean;
  stream: boolean;
  /** The client's rid, or null to generate one. */
  rid: string | null;
  /** Per-request stream_interval, or null for the server's. */
  streamInterval: number | null;
  /** return_logprob: the answer carries output_token_logprobs (and top_logprobs_num of output_top_logprobs). */
  returnLogprob: boolean;
  topLogprobsNum: number;
}

/** Outcome of parsing a body: accepted, or rejected as SGLang would reject it. */
export type ParsedGenerate =
  | { ok: true; params: GenerateParams }
  /** "bad_request": pydantic-style 400 before any stream. "value_error": a ValueError (see above). */
  | { ok: false; kind: "bad_request" | "value_error"; message: string; stream: boolean };

/** Sampling keys SGLang's SamplingParams knows; the mock ignores the values of those it does not model. */
const KNOWN_SAMPLING_KEYS = new Set([
  "max_new_tokens",
  "temperature",
  "top_p",
  "top_k",
  "min_p",
  "ignore_eos",
  "min_new_tokens",
  "stop",
  "stop_token_ids",
  "stop_regex",
  "skip_special_tokens",
  "spaces_between_special_tokens",
  "no_stop_trim",
  "stream_interval",
  "frequency_penalty",
  "presence_penalty",
  "repetition_penalty",
  "n",
  "json_schema",
  "regex",
  "ebnf",
  "structural_tag",
  "logit_bias",
  "sampling_seed",
  "custom_params",
]);

const DEFAULT_MAX_NEW_TOKENS = 128;
const DEFAULT_TEMPERATURE = 1.0;

/** Parse and validate a /generate body against the model's vocabulary size. */
export function parseGenerateBody(bodyText: string, vocabSize: number): ParsedGenerate {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch (err) {
    return badRequest(`Invalid JSON body: ${(err as Error).message}`, false);
  }
  if (!isPlainObject(body)) return badRequest("The request body must be a JSON object.", false);
  const stream = body.stream ?? false;
  if (typeof stream !== "boolean") return badRequest("stream must be a boolean.", false);
  const rid = body.rid ?? null;
  if (rid !== null && typeof rid !== "string") return badRequest("The mock accepts one rid string per request.", stream);

  if (body.text !== undefined && body.text !== null) {
    return badRequest("The mock server needs input_ids: text prompts are not supported (it has no tokenizer).", stream);
  }
  if (body.input_embeds !== undefined && body.input_embeds !== null) {
    return badRequest("The mock server needs input_ids: input_embeds are not supported.", stream);
  }
  const inputIds = body.input_ids;
  if (inputIds === undefined || inputIds === null) {
    return { ok: false, kind: "value_error", message: "Either text, input_ids or input_embeds should be provided.", stream };
  }
  const idsProblem = checkInputIds(inputIds, vocabSize);
  if (idsProblem !== null) return badRequest(idsProblem, stream);

  const sampling = parseSamplingParams(body.sampling_params);
  if (typeof sampling === "string") return badRequest(sampling, stream);
  if ("valueError" in sampling) return { ok: false, kind: "value_error", message: sampling.valueError, stream };
  const returnLogprob = body.return_logprob ?? false;
  if (typeof returnLogprob !== "boolean") return badRequest("return_logprob must be a boolean.", stream);
  const topLogprobsNum = body.top_logprobs_num ?? 0;
  if (typeof topLogprobsNum !== "number" || !Number.isInteger(topLogprobsNum) || topLogprobsNum < 0)
    return badRequest("top_logprobs_num must be a non-negative int.", stream);
  return { ok: true, params: { inputIds: inputIds as number[], stream, rid, ...sampling, returnLogprob, topLogprobsNum } };
}

function checkInputIds(value: unknown, vocabSize: number): string | null {
  if (!Array.isArray(value)) return "input_ids must be a list of ints.";
  if (value.length === 0) return "input_ids must not be empty.";
  if (Array.isArray(value[0])) return "Batch input_ids (a list of lists) are not supported by the mock; send one prompt per request.";
  for (let i = 0; i < value.length; i++) {
    const id: unknown = value[i];
    if (typeof id !== "number" || !Number.isInteger(id)) return `input_ids[${i}] is not an int: ${JSON.stringify(id)}.`;
    if (id < 0 || id >= vocabSize) return `input_ids[${i}] = ${id} is outside the vocabulary [0, ${vocabSize}).`;
  }
  return null;
}

type SamplingResult = Pick<GenerateParams, "maxNewTokens" | "temperature" | "ignoreEos" | "streamInterval"> | { valueError: string };

/** A string result is a 400 before streaming (unknown key or wrong type); valueError is SamplingParams.verify(). */
function parseSamplingParams(value: unknown): SamplingResult | string {
  if (value === undefined || value === null) {
    return { maxNewTokens: DEFAULT_MAX_NEW_TOKENS, temperature: DEFAULT_TEMPERATURE, ignoreEos: false, streamInterval: null };
  }
  if (!isPlainObject(value)) return "sampling_params must be an object (the mock takes one prompt per request).";
  for (const key of Object.keys(value)) {
    // SGLang would fail with a TypeError (500 or a cut stream); a clear 400 is more useful from a mock.
    if (!KNOWN_SAMPLING_KEYS.has(key)) return `Unknown sampling parameter: ${key}.`;
  }
  const maxNewTokens = value.max_new_tokens ?? DEFAULT_MAX_NEW_TOKENS;
  const temperature = value.temperature ?? DEFAULT_TEMPERATURE;
  const ignoreEos = value.ignore_eos ?? false;
  const streamInterval = value.stream_interval ?? null;
  if (typeof maxNewTokens !== "number" || !Number.isInteger(maxNewTokens)) return "max_new_tokens must be an int.";
  if (typeof temperature !== "number") return "temperature must be a number.";
  if (typeof ignoreEos !== "boolean") return "ignore_eos must be a boolean.";
  if (streamInterval !== null && (typeof streamInterval !== "number" || !Number.isInteger(streamInterval))) {
    return "stream_interval must be an int.";
  }
  if (maxNewTokens < 0) return { valueError: `max_new_tokens must be at least 0, got ${maxNewTokens}.` };
  if (!Number.isFinite(temperature) || temperature < 0) {
    return { valueError: `temperature must be non-negative, got ${temperature}.` };
  }
  if (streamInterval !== null && streamInterval < 1) {
    return { valueError: `stream_interval must be at least 1, got ${streamInterval}.` };
  }
  return { maxNewTokens, temperature, ignoreEos, streamInterval };
}

function badRequest(message: string, stream: boolean): ParsedGenerate {
  return { ok: false, kind: "bad_request", message, stream };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
