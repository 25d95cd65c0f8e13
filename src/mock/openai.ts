/**
 * POST /v1/completions (token-id prompts) and POST /v1/chat/completions (messages, templated and tokenized by the
 * mock: chat-template.ts) on the same scheduler, cache and latency model as /generate, written as the mock's
 * personality writes them (openai-formats.ts: vLLM's shape, or llama.cpp's). Headers go out before the first
 * token. Faults apply as on /generate (stream-driver.ts).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { MockContext } from "./context.ts";
import { headerValue } from "./generate.ts";
import { readBody, sendJson, trackInFlight } from "./http.ts";
import { llamacppNative } from "./llamacpp-native.ts";
import { llamacppChat, llamacppCompletions, vllmChat, vllmCompletions, type FormatInput, type UsageState } from "./openai-formats.ts";
import { openaiError, parseChatBody, parseCompletionBody, parseNativeCompletionBody, type CompletionParams } from "./openai-request.ts";
import { driveGeneration } from "./stream-driver.ts";
import { RequestTrace } from "./truth.ts";
import type { ReceivedRequest } from "./types.ts";

/** "completion": llama.cpp's native /completion (llamacpp personality only). */
export type OpenaiEndpoint = "completions" | "chat" | "completion";

/** Serve one POST /v1/completions, /v1/chat/completions or (llama.cpp) /completion. */
export async function handleOpenai(req: IncomingMessage, res: ServerResponse, ctx: MockContext, endpoint: OpenaiEndpoint): Promise<void> {
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
  const llama = opts.personality === "llamacpp";
  const limits = { ...opts, anyModel: llama };
  const parsed =
    endpoint === "chat"
      ? parseChatBody(bodyText, limits, ctx.tokenizer)
      : endpoint === "completion"
        ? parseNativeCompletionBody(bodyText, limits)
        : parseCompletionBody(bodyText, limits);
  if (!parsed.ok) {
    sendJson(res, parsed.status, parsed.body);
    trace.finish("error");
    return;
  }
  const params = parsed.params;
  // vLLM names the request after X-Request-Id when the client sends one; llama.cpp's ids are chatcmpl- always.
  const unique = requestId ?? crypto.randomUUID().replaceAll("-", "");
  const id = llama || endpoint === "chat" ? `chatcmpl-${unique}` : `cmpl-${unique}`;
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
    idSlot: params.idSlot,
  };
  counters.received.push(received);

  const tooLong = contextProblem(params, ctx);
  if (tooLong !== null) {
    sendJson(res, 400, openaiError(tooLong, "BadRequestError", 400));
    trace.finish("error");
    return;
  }
  const { ordinal, fault, forget } = ctx.faults.pick(params.maxTokens);
  if (fault === "fail") {
    ctx.faults.note("fail");
    sendJson(res, 503, openaiError("mock: injected failure", "ServiceUnavailableError", 503));
    trace.finish("fault:fail");
  } else {
    const usage: UsageState = {
      promptTokens: params.inputIds.length,
      cachedTokens: 0,
      prefillStartMs: 0,
      firstTokenMs: 0,
      reportsCached: !opts.noPromptTokensDetails,
    };
    const input: FormatInput = {
      id,
      model: opts.modelName,
      params,
      usage,
      vocabSize: opts.vocabSize,
      faults: { wrongKv: opts.faultWrongKv, tieFlip: opts.faultTieFlip },
    };
    const format =
      endpoint === "completion"
        ? llamacppNative(input)
        : llama
          ? endpoint === "chat"
            ? llamacppChat(input)
            : llamacppCompletions(input)
          : endpoint === "chat"
            ? vllmChat(input)
            : vllmCompletions(input);
    driveGeneration(
      res,
      {
        inputIds: params.inputIds,
        idSlot: params.idSlot,
        cachePrompt: params.cachePrompt,
        maxNewTokens: params.maxTokens,
        stream: params.stream,
        streamInterval: opts.streamInterval,
        fault,
        forget,
        trace,
        format,
        onPrefillStart(hit) {
          usage.cachedTokens = hit.tokens;
          if (hit.slot !== undefined) usage.slot = hit.slot;
          usage.prefillStartMs = performance.now();
          received.cachedTokens = hit.tokens;
        },
        onFirstToken() {
          usage.firstTokenMs = performance.now();
        },
        onEnd: () => {},
      },
      ctx,
    );
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
