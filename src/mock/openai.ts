/**
 * POST /v1/completions in vLLM's style (protocol.md §3.2) on the same scheduler, prefix cache and
 * latency model as /generate: token-id prompts, text deltas, optional usage (final chunk or every
 * chunk), headers sent before the first token. Faults apply as on /generate (stream-driver.ts).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { MockContext } from "./context.ts";
import { headerValue } from "./generate.ts";
import { readBody, sendJson, trackInFlight } from "./http.ts";
import { openaiError, parseCompletionBody, type CompletionParams } from "./openai-request.ts";
import { GeneratedOutput } from "./output.ts";
import { driveGeneration, type WireFormat } from "./stream-driver.ts";
import { RequestTrace } from "./truth.ts";
import type { ReceivedRequest } from "./types.ts";

/** Serve one POST /v1/completions. */
export async function handleCompletions(req: IncomingMessage, res: ServerResponse, ctx: MockContext): Promise<void> {
  const { counters, opts } = ctx;
  counters.completionsRequests++;
  trackInFlight(res, counters);

  let bodyText: string;
  try {
    bodyText = await readBody(req);
  } catch (err) {
    if (!res.destroyed) sendJson(res, 400, openaiError((err as Error).message, "BadRequestError", 400));
    return;
  }
  const requestId = headerValue(req.headers["x-request-id"]);
  const trace = new RequestTrace(ctx.truth, requestId);
  const parsed = parseCompletionBody(bodyText, opts);
  if (!parsed.ok) {
    sendJson(res, parsed.status, parsed.body);
    trace.finish("error");
    return;
  }
  const params = parsed.params;
  // vLLM names the request after X-Request-Id when the client sends one.
  const id = `cmpl-${requestId ?? crypto.randomUUID().replaceAll("-", "")}`;
  trace.rid = id;
  trace.promptTokens = params.inputIds.length;
  const received: ReceivedRequest = {
    rid: id,
    inputIds: opts.recordInputs ? params.inputIds : [],
    maxNewTokens: params.maxTokens,
    temperature: params.temperature,
    ignoreEos: params.ignoreEos,
    stream: params.stream,
    cachedTokens: -1,
  };
  counters.received.push(received);

  const tooLong = contextProblem(params, ctx);
  if (tooLong !== null) {
    sendJson(res, 400, openaiError(tooLong, "BadRequestError", 400));
    trace.finish("error");
    return;
  }
  const { ordinal, fault } = ctx.faults.pick(params.maxTokens);
  if (fault === "fail") {
    ctx.faults.note("fail");
    sendJson(res, 503, openaiError("mock: injected failure", "ServiceUnavailableError", 503));
    trace.finish("fault:fail");
  } else {
    const usage = { promptTokens: params.inputIds.length, cachedTokens: 0 };
    driveGeneration(res, {
      inputIds: params.inputIds,
      maxNewTokens: params.maxTokens,
      stream: params.stream,
      streamInterval: opts.streamInterval,
      fault,
      trace,
      format: completionsFormat(id, opts.modelName, params, usage, opts.vocabSize),
      onPrefillStart(hit) {
        usage.cachedTokens = hit.tokens;
        received.cachedTokens = hit.tokens;
      },
      onEnd: () => {},
    }, ctx);
  }
  if (ctx.faults.isExitPoint(ordinal)) ctx.die();
}

/** vLLM's context-length check (vllm/renderers/params.py), plus the mock's KV-pool limit. */
function contextProblem(params: CompletionParams, ctx: MockContext): string | null {
  const promptLen = params.inputIds.length;
  const total = promptLen + params.maxTokens;
  const limit = ctx.opts.contextLength;
  if (total > limit) {
    return (
      `This model's maximum context length is ${limit} tokens. However, you requested ${total} tokens ` +
      `(${promptLen} in the messages, ${params.maxTokens} in the completion). ` +
      `Please reduce the length of the messages or completion.`
    );
  }
  if (promptLen >= ctx.maxReqInputLen) {
    return `The prompt (${promptLen} tokens) does not fit in the KV cache (${ctx.maxReqInputLen} tokens at most).`;
  }
  return null;
}

interface UsageState {
  promptTokens: number;
  cachedTokens: number;
}

/** The OpenAI completions wire format: always text deltas, finish_reason "length" on the last chunk. */
function completionsFormat(id: string, model: string, params: CompletionParams, usage: UsageState, vocabSize: number): WireFormat {
  const output = new GeneratedOutput(vocabSize);
  const created = Math.floor((performance.timeOrigin + performance.now()) / 1000);
  const usageOf = (completionTokens: number, withDetails: boolean): Record<string, unknown> => {
    const u: Record<string, unknown> = {
      prompt_tokens: usage.promptTokens,
      total_tokens: usage.promptTokens + completionTokens,
      completion_tokens: completionTokens,
    };
    if (withDetails) u.prompt_tokens_details = { cached_tokens: usage.cachedTokens };
    return u;
  };
  const chunk = (completionTokens: number, finishReason: string | null, extraText: string): string => {
    output.growTo(completionTokens);
    const text = output.nextSegment(true).text + extraText;
    const payload: Record<string, unknown> = {
      id,
      object: "text_completion",
      created,
      model,
      choices: [{ index: 0, text, logprobs: null, finish_reason: finishReason, stop_reason: null }],
    };
    if (params.continuousUsage) payload.usage = usageOf(completionTokens, false);
    return JSON.stringify(payload);
  };
  const whole = (completionTokens: number, finishReason: string): Record<string, unknown> => {
    output.growTo(completionTokens);
    return {
      id,
      object: "text_completion",
      created,
      model,
      choices: [{ index: 0, text: output.text, logprobs: null, finish_reason: finishReason, stop_reason: null }],
      usage: usageOf(completionTokens, true),
    };
  };
  return {
    tokenEvent: (completionTokens, done, extraText) => chunk(completionTokens, done ? "length" : null, extraText),
    abortEvent: (completionTokens) => chunk(completionTokens, "abort", ""),
    errorEvent: () => JSON.stringify(openaiError("mock: injected error", "InternalServerError", 500)),
    trailerEvents: (completionTokens) =>
      params.includeUsage ? [JSON.stringify({ id, object: "text_completion", created, model, choices: [], usage: usageOf(completionTokens, true) })] : [],
    sendWhole: (res, completionTokens) => sendJson(res, 200, whole(completionTokens, "length")),
    sendWholeFault(res, fault, completionTokens) {
      if (fault === "abort") sendJson(res, 200, whole(completionTokens, "abort"));
      else sendJson(res, 500, openaiError("mock: injected error", "InternalServerError", 500));
    },
  };
}
