/**
 * The /generate handler: validate, check the context budget, then hand the request to the scheduler
 * (stream-driver.ts) and write SGLang's response (SSE stream or one JSON object). Closing the
 * connection cancels it. Injected faults (faults.ts) are picked here; "fail" is answered here.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { MockContext } from "./context.ts";
import { parseGenerateBody, type GenerateParams } from "./generate-request.ts";
import { readBody, sendBadRequest, sendJson, trackInFlight } from "./http.ts";
import { buildMetaInfo, GeneratedOutput, outputTokenText, sseEvent, SSE_DONE, type MetaState } from "./output.ts";
import { logprobAnswer, type AnswerFaults } from "./logprobs.ts";
import { SglangEventBuilder } from "./sglang-events.ts";
import { driveGeneration, SSE_HEADERS, type WireFormat } from "./stream-driver.ts";
import { RequestTrace } from "./truth.ts";
import type { ReceivedRequest } from "./types.ts";

/** SGLang's 503 body (an HTTPException from a 503 scheduler abort), used for the fail fault. */
const FAIL_BODY = { object: "error", message: "mock: injected failure", type: "503", param: null, code: 503 };
/** The error-event fault's event, as SGLang >= 0.5.14 writes a ValueError. */
const INJECTED_ERROR = { message: "mock: injected error", type: "invalid_request_error", code: 400, retryable: false };
/** The abort fault's finish_reason: SGLang's request timeout abort. */
const INJECTED_ABORT = { type: "abort" as const, message: "Request running timeout reached.", status_code: 503, err_type: "ServiceUnavailable" };
const INJECTED_ABORT_JSON = JSON.stringify(INJECTED_ABORT);

/** Serve one POST|PUT /generate. */
export async function handleGenerate(req: IncomingMessage, res: ServerResponse, ctx: MockContext): Promise<void> {
  const { counters } = ctx;
  const receivedAtMs = performance.now();
  counters.generateRequests++;
  trackInFlight(res, counters);

  let bodyText: string;
  try {
    bodyText = await readBody(req);
  } catch (err) {
    if (!res.destroyed) sendBadRequest(res, (err as Error).message);
    return;
  }
  if (ctx.opts.slowHeadersMs > 0) {
    ctx.faults.note("slow-headers");
    await Bun.sleep(ctx.opts.slowHeadersMs);
    if (res.destroyed) return;
  }
  const trace = new RequestTrace(ctx.truth, headerValue(req.headers["x-request-id"]));
  const parsed = parseGenerateBody(bodyText, ctx.opts.vocabSize);
  if (!parsed.ok) {
    if (parsed.kind === "bad_request") sendBadRequest(res, parsed.message);
    else sendValueError(res, parsed.message, parsed.stream);
    trace.finish("error");
    return;
  }
  const params = parsed.params;
  const rid = params.rid ?? crypto.randomUUID().replaceAll("-", "");
  trace.rid = rid;
  trace.promptTokens = params.inputIds.length;
  const received: ReceivedRequest = {
    rid,
    inputIds: ctx.opts.recordInputs ? params.inputIds : [],
    maxNewTokens: params.maxNewTokens,
    temperature: params.temperature,
    ignoreEos: params.ignoreEos,
    stream: params.stream,
    cachedTokens: -1,
  };
  counters.received.push(received);

  const rejection = contextProblem(params, rid, ctx);
  if (rejection !== null) {
    sendValueError(res, rejection, params.stream);
    trace.finish("error");
    return;
  }
  const meta: MetaState = { rid, promptTokens: params.inputIds.length, cachedTokens: 0, cachedHostTokens: 0, receivedAtMs };
  if (params.inputIds.length >= ctx.maxReqInputLen) {
    sendInputTooLongAbort(res, meta, ctx.maxReqInputLen, params.stream);
    trace.finish("error");
    return;
  }
  const { ordinal, fault, forget } = ctx.faults.pick(params.maxNewTokens);
  if (fault === "fail") {
    ctx.faults.note("fail");
    sendJson(res, 503, FAIL_BODY);
    trace.finish("fault:fail");
  } else {
    ctx.liveRids.add(rid);
    driveGeneration(
      res,
      {
        inputIds: params.inputIds,
        maxNewTokens: params.maxNewTokens,
        stream: params.stream,
        streamInterval: params.streamInterval ?? ctx.opts.streamInterval,
        fault,
        forget,
        trace,
        format: sglangFormat(meta, ctx.opts.vocabSize, ctx.opts.incremental && params.stream, params, {
          wrongKv: ctx.opts.faultWrongKv,
          tieFlip: ctx.opts.faultTieFlip,
        }),
        onPrefillStart(hit) {
          meta.cachedTokens = hit.tokens;
          meta.cachedHostTokens = hit.hostTokens;
          received.cachedTokens = hit.tokens;
        },
        onEnd: () => ctx.liveRids.delete(rid),
      },
      ctx,
    );
  }
  if (ctx.faults.isExitPoint(ordinal)) ctx.die();
}

/** The first value of a request header, or null. */
export function headerValue(value: string | string[] | undefined): string | null {
  if (Array.isArray(value)) return value[0] ?? null;
  return value ?? null;
}

/** ValueErrors raised before generation, in SGLang's order: duplicate rid, then the context budget. */
function contextProblem(params: GenerateParams, rid: string, ctx: MockContext): string | null {
  const contextLength = ctx.opts.contextLength;
  const inputLen = params.inputIds.length;
  if (ctx.liveRids.has(rid)) return `Duplicate request ID detected: ${rid}`;
  if (inputLen >= contextLength) {
    return `The input (${inputLen} tokens) is longer than the model's context length (${contextLength} tokens).`;
  }
  const total = inputLen + params.maxNewTokens;
  if (total > contextLength) {
    return (
      `Requested token count exceeds the model's maximum context length of ${contextLength} tokens. ` +
      `You requested a total of ${total} tokens: ${inputLen} tokens from the input messages and ` +
      `${params.maxNewTokens} tokens for the completion. Please reduce the number of tokens in the input ` +
      `messages or the completion to fit within the limit.`
    );
  }
  return null;
}

/** SGLang's native wire format: cumulative (or incremental) text and output_ids with meta_info. */
function sglangFormat(meta: MetaState, vocabSize: number, incremental: boolean, params: GenerateParams, faults: AnswerFaults): WireFormat {
  const events = new SglangEventBuilder(meta, vocabSize, incremental);
  return {
    tokenEvent: (completionTokens, done, extraText) =>
      events.event(completionTokens, done ? `{"type":"length","length":${completionTokens}}` : null, extraText),
    abortEvent: (completionTokens) => events.event(completionTokens, INJECTED_ABORT_JSON, ""),
    errorEvent: () => JSON.stringify({ error: INJECTED_ERROR }),
    trailerEvents: () => [],
    sendWhole(res, completionTokens) {
      if (params.returnLogprob) {
        // SGLang's tuples (logprob, token_id, text): text is null without return_text_in_logprobs.
        const a = logprobAnswer(completionTokens, vocabSize, params.topLogprobsNum, meta.cachedTokens, faults);
        const info = buildMetaInfo(meta, completionTokens, { type: "length", length: completionTokens }, true);
        info.input_token_logprobs = [];
        info.output_token_logprobs = a.ids.map((id, i) => [a.chosen[i], id, null]);
        info.input_top_logprobs = [];
        info.output_top_logprobs = params.topLogprobsNum > 0 ? a.top.map((ranked) => ranked.map((t) => [t.logprob, t.id, null])) : [];
        sendJson(res, 200, { text: a.ids.map(outputTokenText).join(""), output_ids: a.ids, meta_info: info });
        return;
      }
      const output = new GeneratedOutput(vocabSize);
      output.growTo(completionTokens);
      const info = buildMetaInfo(meta, completionTokens, { type: "length", length: completionTokens }, true);
      sendJson(res, 200, { text: output.text, output_ids: output.ids, meta_info: info });
    },
    sendWholeFault(res, fault) {
      // Non-streaming, SGLang turns a ValueError into 400 and a 503 scheduler abort into an HTTPException.
      if (fault === "error-event") sendJson(res, 400, { error: { message: INJECTED_ERROR.message } });
      else sendJson(res, 503, { object: "error", message: INJECTED_ABORT.message, type: "503", param: null, code: 503 });
    },
  };
}

/** A ValueError: 400 {"error":{"message"}} without streaming, else 200 + error event + [DONE]. */
function sendValueError(res: ServerResponse, message: string, stream: boolean): void {
  if (!stream) {
    sendJson(res, 400, { error: { message } });
    return;
  }
  res.writeHead(200, SSE_HEADERS);
  const event = { error: { message, type: "invalid_request_error", code: 400, retryable: false } };
  res.end(sseEvent(event) + SSE_DONE);
}

/** The scheduler's abort for a prompt at or over max_req_input_len (SGLang validate_input_length). */
function sendInputTooLongAbort(res: ServerResponse, meta: MetaState, maxReqInputLen: number, stream: boolean): void {
  const message =
    `Input length (${meta.promptTokens} tokens) exceeds the maximum allowed length (${maxReqInputLen} tokens). ` +
    `Use a shorter input or enable --allow-auto-truncate.`;
  if (!stream) {
    sendJson(res, 400, { error: { message } });
    return;
  }
  const finishReason = { type: "abort" as const, message, status_code: 400, err_type: "BadRequestError" };
  const info = buildMetaInfo(meta, 0, finishReason, true);
  res.writeHead(200, SSE_HEADERS);
  res.end(sseEvent({ text: "", output_ids: [], meta_info: info }) + SSE_DONE);
}
