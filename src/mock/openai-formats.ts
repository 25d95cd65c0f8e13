/**
 * How the mock writes OpenAI-style streams, per server (docs/protocol.md §3.2, §8; docs/llamacpp.md):
 *
 * - vLLM (and SGLang's OpenAI server): completions chunks with optional usage on every chunk
 *   (continuous_usage_stats) and a final usage chunk with `choices: []` (include_usage); chat streams open with a
 *   role chunk sent before prefill, then content deltas, the finish reason on the last one.
 * - llama.cpp: completions chunks with choices first, then a closing chunk (empty text, finish reason, usage and
 *   timings, always: no separate usage chunk, continuous usage ignored); chat streams send the role chunk with the
 *   first token, content deltas, a closing chunk with an empty delta, then the usage chunk when asked, with timings.
 */
import type { ServerResponse } from "node:http";
import { sendJson } from "./http.ts";
import { openaiError, type CompletionParams } from "./openai-request.ts";
import { GeneratedOutput, outputTokenText } from "./output.ts";
import { logprobAnswer, type AnswerFaults } from "./logprobs.ts";
import type { WireFormat } from "./stream-driver.ts";

/** What the formats learn as the request runs. */
export interface UsageState {
  /** Whether usage carries prompt_tokens_details (vLLM: only with --enable-prompt-tokens-details). */
  reportsCached: boolean;
  promptTokens: number;
  cachedTokens: number;
  /** The slot that ran it, where the cache is one per slot; absent: none named. */
  slot?: number;
  /** performance.now() at prefill start and at the first token, for llama.cpp's timings. */
  prefillStartMs: number;
  firstTokenMs: number;
}

export interface FormatInput {
  id: string;
  model: string;
  params: CompletionParams;
  usage: UsageState;
  vocabSize: number;
  faults: AnswerFaults;
}

const nowS = (): number => Math.floor((performance.timeOrigin + performance.now()) / 1000);

function usageOf(u: UsageState, completionTokens: number, withDetails: boolean): Record<string, unknown> {
  withDetails &&= u.reportsCached;
  const usage: Record<string, unknown> = {
    prompt_tokens: u.promptTokens,
    total_tokens: u.promptTokens + completionTokens,
    completion_tokens: completionTokens,
  };
  if (withDetails) usage.prompt_tokens_details = { cached_tokens: u.cachedTokens };
  return usage;
}

/** llama.cpp's usage: completion tokens first, cached tokens always. */
function llamaUsage(u: UsageState, completionTokens: number): Record<string, unknown> {
  return {
    completion_tokens: completionTokens,
    prompt_tokens: u.promptTokens,
    total_tokens: u.promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: u.cachedTokens },
  };
}

/** llama.cpp's timings: cache_n + prompt_n == prompt tokens. */
export function llamaTimings(u: UsageState, completionTokens: number): Record<string, unknown> {
  const promptMs = Math.max(0, u.firstTokenMs - u.prefillStartMs);
  const predictedMs = Math.max(0, performance.now() - u.firstTokenMs);
  return {
    cache_n: u.cachedTokens,
    prompt_n: u.promptTokens - u.cachedTokens,
    prompt_ms: promptMs,
    predicted_n: completionTokens,
    predicted_ms: predictedMs,
  };
}

const error500 = (): string => JSON.stringify(openaiError("mock: injected error", "InternalServerError", 500));

/** vLLM's /v1/completions. */
export function vllmCompletions(f: FormatInput): WireFormat {
  const output = new GeneratedOutput(f.vocabSize);
  const created = nowS();
  const chunk = (completionTokens: number, finishReason: string | null, extraText: string): string => {
    output.growTo(completionTokens);
    const payload: Record<string, unknown> = {
      id: f.id,
      object: "text_completion",
      created,
      model: f.model,
      choices: [{ index: 0, text: output.nextSegment(true).text + extraText, logprobs: null, finish_reason: finishReason, stop_reason: null }],
    };
    if (f.params.continuousUsage) payload.usage = usageOf(f.usage, completionTokens, false);
    return JSON.stringify(payload);
  };
  const whole = (completionTokens: number, finishReason: string): Record<string, unknown> => {
    output.growTo(completionTokens);
    if (f.params.logprobs !== null) return { ...wholeWithLogprobs(completionTokens, finishReason) };
    return {
      id: f.id,
      object: "text_completion",
      created,
      model: f.model,
      choices: [{ index: 0, text: output.text, logprobs: null, finish_reason: finishReason, stop_reason: null }],
      usage: usageOf(f.usage, completionTokens, true),
    };
  };
  // vLLM's completions logprobs: parallel lists, and per position a dict of the top tokens (the chosen one included),
  // tokens as text or, with return_tokens_as_token_ids, as `token_id:N`.
  const wholeWithLogprobs = (n: number, finishReason: string): Record<string, unknown> => {
    const a = logprobAnswer(n, f.vocabSize, f.params.logprobs!, f.usage.cachedTokens, f.faults);
    const name = (id: number) => (f.params.tokensAsIds ? `token_id:${id}` : outputTokenText(id));
    const texts = a.ids.map(outputTokenText);
    const offsets = texts.map((_, i) => texts.slice(0, i).join("").length);
    const logprobs = {
      text_offset: offsets,
      token_logprobs: a.chosen,
      tokens: a.ids.map(name),
      top_logprobs: a.top.map((ranked) => Object.fromEntries(ranked.map((t) => [name(t.id), t.logprob]))),
    };
    return {
      id: f.id,
      object: "text_completion",
      created,
      model: f.model,
      choices: [{ index: 0, text: texts.join(""), logprobs, finish_reason: finishReason, stop_reason: null }],
      usage: usageOf(f.usage, n, true),
    };
  };
  return {
    tokenEvent: (n, done, extra) => chunk(n, done ? "length" : null, extra),
    abortEvent: (n) => chunk(n, "abort", ""),
    errorEvent: error500,
    trailerEvents: (n) =>
      f.params.includeUsage
        ? [JSON.stringify({ id: f.id, object: "text_completion", created, model: f.model, choices: [], usage: usageOf(f.usage, n, true) })]
        : [],
    sendWhole: (res, n) => sendJson(res, 200, whole(n, "length")),
    sendWholeFault: (res, fault, n) => sendFault(res, fault, () => whole(n, "abort")),
  };
}

/** vLLM's /v1/chat/completions. */
export function vllmChat(f: FormatInput): WireFormat {
  const output = new GeneratedOutput(f.vocabSize);
  const created = nowS();
  const chunk = (delta: Record<string, unknown>, finishReason: string | null, completionTokens: number): string => {
    const payload: Record<string, unknown> = {
      id: f.id,
      object: "chat.completion.chunk",
      created,
      model: f.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    };
    if (f.params.continuousUsage) payload.usage = usageOf(f.usage, completionTokens, false);
    return JSON.stringify(payload);
  };
  const content = (n: number, extra: string): Record<string, unknown> => {
    output.growTo(n);
    return { content: output.nextSegment(true).text + extra };
  };
  const whole = (n: number, finishReason: string): Record<string, unknown> => {
    output.growTo(n);
    return {
      id: f.id,
      object: "chat.completion",
      created,
      model: f.model,
      choices: [{ index: 0, message: { role: "assistant", content: output.text }, logprobs: null, finish_reason: finishReason }],
      usage: usageOf(f.usage, n, true),
    };
  };
  return {
    openingEvents: () => [chunk({ role: "assistant", content: "" }, null, 0)],
    tokenEvent: (n, done, extra) => chunk(content(n, extra), done ? "length" : null, n),
    abortEvent: (n) => chunk(content(n, ""), "abort", n),
    errorEvent: error500,
    trailerEvents: (n) =>
      f.params.includeUsage
        ? [JSON.stringify({ id: f.id, object: "chat.completion.chunk", created, model: f.model, choices: [], usage: usageOf(f.usage, n, true) })]
        : [],
    sendWhole: (res, n) => sendJson(res, 200, whole(n, "length")),
    sendWholeFault: (res, fault, n) => sendFault(res, fault, () => whole(n, "abort")),
  };
}

/** llama.cpp's /v1/completions. */
export function llamacppCompletions(f: FormatInput): WireFormat {
  const output = new GeneratedOutput(f.vocabSize);
  const created = nowS();
  const tail = { created, model: f.model, system_fingerprint: "b1-mock", object: "text_completion", id: f.id };
  const chunk = (text: string, finishReason: string | null): Record<string, unknown> => ({
    choices: [{ text, index: 0, logprobs: null, finish_reason: finishReason }],
    ...tail,
  });
  const closing = (n: number, finishReason: string): string =>
    JSON.stringify({ ...chunk("", finishReason), usage: llamaUsage(f.usage, n), timings: llamaTimings(f.usage, n) });
  return {
    tokenEvent: (n, _done, extra) => {
      output.growTo(n);
      return JSON.stringify(chunk(output.nextSegment(true).text + extra, null));
    },
    abortEvent: (n) => closing(n, "abort"),
    errorEvent: error500,
    trailerEvents: (n) => [closing(n, "length")],
    sendWhole: (res, n) => {
      output.growTo(n);
      sendJson(res, 200, { ...chunk(output.text, "length"), usage: llamaUsage(f.usage, n), timings: llamaTimings(f.usage, n) });
    },
    sendWholeFault: (res, fault, n) => sendFault(res, fault, () => ({ ...chunk(output.text, "abort"), usage: llamaUsage(f.usage, n) })),
  };
}

/** llama.cpp's /v1/chat/completions. */
export function llamacppChat(f: FormatInput): WireFormat {
  const output = new GeneratedOutput(f.vocabSize);
  const created = nowS();
  let opened = false;
  const chunk = (delta: Record<string, unknown>, finishReason: string | null): Record<string, unknown> => ({
    choices: [{ finish_reason: finishReason, index: 0, delta }],
    created,
    id: f.id,
    model: f.model,
    system_fingerprint: "b1-mock",
    object: "chat.completion.chunk",
  });
  const usageChunk = (n: number): string =>
    JSON.stringify({
      choices: [],
      created,
      id: f.id,
      model: f.model,
      system_fingerprint: "b1-mock",
      object: "chat.completion.chunk",
      usage: llamaUsage(f.usage, n),
      timings: llamaTimings(f.usage, n),
    });
  return {
    tokenEvent: (n, _done, extra) => {
      output.growTo(n);
      const delta = JSON.stringify(chunk({ content: output.nextSegment(true).text + extra }, null));
      if (opened) return delta;
      opened = true;
      // The role chunk arrives with the first token, after prefill: one write, two events.
      return `${JSON.stringify(chunk({ role: "assistant", content: null }, null))}\n\ndata: ${delta}`;
    },
    abortEvent: () => JSON.stringify(chunk({}, "abort")),
    errorEvent: error500,
    trailerEvents: (n) => {
      const closing = chunk({}, "length");
      if (f.params.includeUsage) return [JSON.stringify(closing), usageChunk(n)];
      return [JSON.stringify({ ...closing, timings: llamaTimings(f.usage, n) })];
    },
    sendWhole: (res, n) => {
      output.growTo(n);
      sendJson(res, 200, {
        choices: [{ finish_reason: "length", index: 0, message: { role: "assistant", content: output.text } }],
        created,
        model: f.model,
        object: "chat.completion",
        usage: llamaUsage(f.usage, n),
        id: f.id,
        timings: llamaTimings(f.usage, n),
      });
    },
    sendWholeFault: (res, fault) => sendFault(res, fault, () => chunk({}, "abort")),
  };
}

function sendFault(res: ServerResponse, fault: "error-event" | "abort", abortBody: () => Record<string, unknown>): void {
  if (fault === "abort") sendJson(res, 200, abortBody());
  else sendJson(res, 500, openaiError("mock: injected error", "InternalServerError", 500));
}
