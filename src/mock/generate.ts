/**
 * The /generate handler: validate, check the context budget, then hand the request to the scheduler
 * and write SGLang's response (SSE stream or one JSON object). Closing the connection cancels it.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { MockOptions } from "./options.ts";
import { parseGenerateBody, type GenerateParams } from "./generate-request.ts";
import { readBody, sendBadRequest, sendJson } from "./http.ts";
import { buildMetaInfo, GeneratedOutput, sseEvent, SSE_DONE, type MetaState } from "./output.ts";
import type { MockScheduler } from "./scheduler.ts";
import type { MockCounters, ReceivedRequest } from "./types.ts";

/** What the handler needs from the server. */
export interface GenerateContext {
  opts: MockOptions;
  scheduler: MockScheduler;
  counters: MockCounters;
  /** rids of requests still running: SGLang rejects a duplicate. */
  liveRids: Set<string>;
  /** Longest prompt the scheduler takes (SGLang: min(context_len, max_total_num_tokens) - 1). */
  maxReqInputLen: number;
}

const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8" };

/** Serve one POST|PUT /generate. */
export async function handleGenerate(req: IncomingMessage, res: ServerResponse, ctx: GenerateContext): Promise<void> {
  const { counters } = ctx;
  const receivedAtMs = performance.now();
  counters.generateRequests++;
  counters.inFlight++;
  counters.maxInFlight = Math.max(counters.maxInFlight, counters.inFlight);
  res.on("close", () => counters.inFlight--);

  let bodyText: string;
  try {
    bodyText = await readBody(req);
  } catch (err) {
    if (!res.destroyed) sendBadRequest(res, (err as Error).message);
    return;
  }
  const parsed = parseGenerateBody(bodyText, ctx.opts.vocabSize);
  if (!parsed.ok) {
    if (parsed.kind === "bad_request") sendBadRequest(res, parsed.message);
    else sendValueError(res, parsed.message, parsed.stream);
    return;
  }
  const params = parsed.params;
  const rid = params.rid ?? crypto.randomUUID().replaceAll("-", "");
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
    return;
  }
  const meta: MetaState = { rid, promptTokens: params.inputIds.length, cachedTokens: 0, receivedAtMs };
  if (params.inputIds.length >= ctx.maxReqInputLen) {
    sendInputTooLongAbort(res, meta, ctx.maxReqInputLen, params.stream);
    return;
  }
  runGeneration(res, params, meta, received, ctx);
}

/** ValueErrors raised before generation, in SGLang's order: duplicate rid, then the context budget. */
function contextProblem(params: GenerateParams, rid: string, ctx: GenerateContext): string | null {
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

function runGeneration(
  res: ServerResponse,
  params: GenerateParams,
  meta: MetaState,
  received: ReceivedRequest,
  ctx: GenerateContext,
): void {
  const output = new GeneratedOutput(ctx.opts.vocabSize);
  const incremental = ctx.opts.incremental && params.stream;
  let eventsSent = 0;
  ctx.liveRids.add(meta.rid);
  if (params.stream) {
    res.writeHead(200, SSE_HEADERS);
    res.flushHeaders();
  }
  const ticket = ctx.scheduler.submit({
    inputIds: params.inputIds,
    maxNewTokens: params.maxNewTokens,
    streamInterval: params.streamInterval ?? ctx.opts.streamInterval,
    onPrefillStart(cachedTokens) {
      meta.cachedTokens = cachedTokens;
      received.cachedTokens = cachedTokens;
    },
    onTokens(completionTokens, done) {
      output.growTo(completionTokens);
      const finishReason = done ? { type: "length" as const, length: completionTokens } : null;
      if (done) ctx.liveRids.delete(meta.rid);
      if (!params.stream) {
        if (!done) return;
        const info = buildMetaInfo(meta, completionTokens, finishReason, true);
        sendJson(res, 200, { text: output.text, output_ids: output.ids, meta_info: info });
        return;
      }
      const segment = output.nextSegment(incremental);
      const info = buildMetaInfo(meta, completionTokens, finishReason, eventsSent === 0);
      eventsSent++;
      res.write(sseEvent({ text: segment.text, output_ids: segment.outputIds, meta_info: info }));
      if (done) res.end(SSE_DONE);
    },
  });
  res.on("close", () => {
    if (res.writableFinished) return;
    // The client went away: SGLang's background abort task cancels the request.
    ticket.cancel();
    ctx.liveRids.delete(meta.rid);
  });
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
