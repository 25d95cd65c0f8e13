/**
 * Runs one accepted generation through the scheduler and writes it in a protocol's wire format
 * (SGLang native or OpenAI completions), injecting the request's fault on the way and recording
 * ground truth and /metrics counters. Both /generate and /v1/completions use it, so every fault
 * behaves the same on both.
 *
 * A stream fault fires in place of the third token event ("after 2 token events"), or in place of the
 * final one when the request has fewer events, so that it is always observable.
 *
 * Events go out through a FlushedWriter (socket-write.ts): each is on the wire when the truth log stamps
 * it. The final event, any trailer and [DONE] leave in one write, stamped like the others; the response's
 * end (the chunked terminator and node:http's finish/close bookkeeping) follows once the current decode
 * step is written, so that the step's other streams do not wait for it.
 */
import type { ServerResponse } from "node:http";
import type { MockContext } from "./context.ts";
import type { StreamFault } from "./faults.ts";
import { SSE_DONE } from "./output.ts";
import { FlushedWriter } from "./socket-write.ts";
import type { CacheHit } from "./tiered-cache.ts";
import type { RequestTrace, TruthEnd } from "./truth.ts";

/** How a protocol writes a generation. Event methods return the JSON text of one SSE `data:` payload. */
export interface WireFormat {
  /** A token event with `completionTokens` so far; `extraText` is appended to its text (fault marker). */
  tokenEvent(completionTokens: number, done: boolean, extraText: string): string;
  /** The event that ends a stream with an abort finish reason (the abort fault). */
  abortEvent(completionTokens: number): string;
  /** The error event (the error-event fault). */
  errorEvent(): string;
  /** Events after the last token event and before [DONE] (OpenAI's usage chunk). */
  trailerEvents(completionTokens: number): string[];
  /** Events written with the headers, before prefill (vLLM's chat role chunk). */
  openingEvents?(): string[];
  /** false: the stream ends after its last event with no `[DONE]` (llama.cpp's native /completion). */
  sendsDone?: boolean;
  /** Non-streaming: the finished response. */
  sendWhole(res: ServerResponse, completionTokens: number): void;
  /** Non-streaming: the answer to an error-event or abort fault. */
  sendWholeFault(res: ServerResponse, fault: "error-event" | "abort", completionTokens: number): void;
}

/** One generation to run. */
export interface DriveJob {
  inputIds: number[];
  /** llama.cpp's id_slot and cache_prompt (see GenerationJob). */
  idSlot?: number | null;
  cachePrompt?: boolean;
  maxNewTokens: number;
  stream: boolean;
  streamInterval: number;
  fault: StreamFault | null;
  /** The forget fault was picked for it (--fault-forget-every): it recomputes a prompt the cache holds. */
  forget?: boolean;
  trace: RequestTrace;
  format: WireFormat;
  onPrefillStart(hit: CacheHit): void;
  /** The first token is out (llama.cpp's timings split prompt and predicted time there). */
  onFirstToken?(): void;
  /** The request ended in any way (finished, fault, client gone); called once. */
  onEnd(): void;
}

/** SSE response headers, as SGLang and vLLM send them. */
export const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8" };

const FAULT_AFTER_EVENTS = 2;
/** The malformed fault's event: cut off in the middle of an object. */
const MALFORMED_EVENT = 'data: {"text": "x", "meta_info": {\n\n';
/** Appended to a token's text and swapped for a raw 0xff byte once serialized (the invalid-utf8 fault). */
const INVALID_UTF8_MARK = "\u0000invalid-utf8\u0000";
const INVALID_UTF8_MARK_JSON = JSON.stringify(INVALID_UTF8_MARK).slice(1, -1);

const sse = (payload: string): string => `data: ${payload}\n\n`;

/** Faults that exist only on a stream; a non-streamed request that draws one runs normally. */
const STREAM_ONLY: ReadonlySet<StreamFault> = new Set(["malformed", "invalid-utf8"]);

/** Responses whose last bytes are written and that end once the current task is over. */
let endsDue: ServerResponse[] = [];

function endLater(res: ServerResponse): void {
  if (endsDue.length === 0) setImmediate(endDueResponses);
  endsDue.push(res);
}

function endDueResponses(): void {
  const due = endsDue;
  endsDue = [];
  for (const res of due) if (!res.destroyed && !res.writableEnded) res.end();
}

/** Submit `job` to the scheduler and write its response; closing the connection cancels it. */
export function driveGeneration(res: ServerResponse, job: DriveJob, ctx: MockContext): void {
  const { trace, format } = job;
  const fault = job.fault !== null && (job.stream || !STREAM_ONLY.has(job.fault)) ? job.fault : null;
  let calls = 0;
  let countedTokens = 0;
  let cacheHit: CacheHit = { tokens: 0, deviceTokens: 0, hostTokens: 0 };
  let faultFired = false;
  let ended = false;
  // While a stall holds an event, later ones queue behind it so the order on the wire never changes.
  let held: Array<() => void> | null = null;
  let holdTimer: ReturnType<typeof setTimeout> | null = null;

  const end = (how: TruthEnd): void => {
    if (ended) return;
    ended = true;
    trace.finish(how);
    job.onEnd();
  };
  const finishedLabel = (): TruthEnd => (faultFired ? `fault:${fault}` : "done");

  const deliver = (completionTokens: number, done: boolean, corrupt: boolean): void => {
    if (ended || res.destroyed) return;
    if (!job.stream) {
      if (!done) return;
      format.sendWhole(res, completionTokens);
      trace.event(completionTokens);
      end(finishedLabel());
      return;
    }
    const payload = format.tokenEvent(completionTokens, done, corrupt ? INVALID_UTF8_MARK : "");
    if (corrupt) {
      writer.write(withInvalidUtf8(payload, done ? finalTail(completionTokens) : "\n\n"));
    } else if (!done) {
      writer.write("data: " + payload + "\n\n");
    } else {
      writer.write("data: " + payload + finalTail(completionTokens));
    }
    trace.event(completionTokens);
    if (!done) return;
    end(finishedLabel());
    endLater(res);
  };
  /** What follows the final token event's payload: its blank line, any trailer events, [DONE]. */
  const finalTail = (completionTokens: number): string => {
    let tail = "\n\n";
    for (const extra of format.trailerEvents(completionTokens)) tail += sse(extra);
    return format.sendsDone === false ? tail : tail + SSE_DONE;
  };

  /** Fire the fault at this event; true when it replaced the event and ended the request. */
  const inject = (completionTokens: number, done: boolean): boolean => {
    faultFired = true;
    ctx.faults.note(fault as StreamFault);
    switch (fault) {
      case "reset": {
        ticket.cancel();
        end("fault:reset");
        // A millisecond later: an RST can make the client drop the previous event unread, and with short
        // itls both may fall in one decode step.
        const socket = res.socket;
        setTimeout(() => socket?.destroy(), 1);
        return true;
      }
      case "error-event":
      case "abort":
        ticket.cancel();
        if (!job.stream) {
          format.sendWholeFault(res, fault, completionTokens);
        } else {
          writer.write(sse(fault === "abort" ? format.abortEvent(completionTokens) : format.errorEvent()) + (format.sendsDone === false ? "" : SSE_DONE));
          if (fault === "abort") trace.event(completionTokens);
          res.end();
        }
        end(`fault:${fault}`);
        return true;
      case "stall": {
        const stallMs = ctx.opts.stallS * 1000;
        if (!done) ticket.delay(stallMs);
        held = [];
        holdTimer = setTimeout(() => {
          const queued = held ?? [];
          held = null;
          holdTimer = null;
          deliver(completionTokens, done, false);
          for (const next of queued) next();
        }, stallMs);
        return true;
      }
      case "malformed":
        writer.write(MALFORMED_EVENT);
        return false;
      default:
        return false;
    }
  };

  if (job.stream) {
    res.writeHead(200, SSE_HEADERS);
    res.flushHeaders();
  }
  const writer = new FlushedWriter(res);
  if (job.stream) for (const opening of format.openingEvents?.() ?? []) writer.write(sse(opening));
  const ticket = ctx.scheduler.submit({
    inputIds: job.inputIds,
    idSlot: job.idSlot ?? null,
    cachePrompt: job.cachePrompt !== false,
    maxNewTokens: job.maxNewTokens,
    streamInterval: job.streamInterval,
    forget: job.forget === true,
    onPrefillStart(hit, forgottenTokens) {
      trace.cachedTokens = hit.tokens;
      trace.forgottenTokens = forgottenTokens;
      if (forgottenTokens > 0) ctx.faults.note("forget");
      cacheHit = hit;
      job.onPrefillStart(hit);
    },
    onTokens(completionTokens, done) {
      if (calls === 0) job.onFirstToken?.();
      if (calls++ === 0) ctx.metrics.countPrefill(job.inputIds.length, cacheHit);
      ctx.metrics.countGenerated(completionTokens - countedTokens);
      countedTokens = completionTokens;
      if (held !== null) {
        held.push(() => deliver(completionTokens, done, false));
        return;
      }
      const firesNow = fault !== null && !faultFired && (calls > FAULT_AFTER_EVENTS || done);
      if (firesNow && inject(completionTokens, done)) return;
      deliver(completionTokens, done, firesNow && fault === "invalid-utf8");
    },
  });
  res.on("close", () => {
    if (holdTimer !== null) clearTimeout(holdTimer);
    if (ended) return;
    // The client went away (or the server died): SGLang's and vLLM's abort-on-disconnect cancel the request.
    ticket.cancel();
    end("disconnect");
  });
}

/** One SSE event (then `tail`) whose text carries a raw 0xff byte where the marker was. */
function withInvalidUtf8(payload: string, tail: string): Buffer {
  const at = payload.indexOf(INVALID_UTF8_MARK_JSON);
  return Buffer.concat([
    Buffer.from("data: " + payload.slice(0, at)),
    Buffer.from([0xff]),
    Buffer.from(payload.slice(at + INVALID_UTF8_MARK_JSON.length) + tail),
  ]);
}
