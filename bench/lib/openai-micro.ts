/**
 * Micro measurement of the per-event client work that reading OpenAI chunks costs, before and after the byte
 * readers, without a network: synthetic vLLM chunks (continuous usage, realistic id and model lengths, mixed
 * ASCII / multi-byte text) go through the real SSE splitter in buffers of their own, as fetch hands them out.
 *
 * - before: the baseline scanner (JSON.parse of every chunk), every token payload view kept until the stream
 *   ends, copied then, and parsed again for its text after the run (bench/lib/baseline-*.ts);
 * - after: scanOpenaiEvent and the escaped text bytes copied out of each chunk, decoded once (src/).
 *
 * Both sides do what stream.ts does per event and per request, and nothing else (no timing, no fetch).
 */
import { createEventFields } from "../../src/backends/types.ts";
import { scanOpenaiEvent } from "../../src/backends/openai-events.ts";
import { createSseSplitter } from "../../src/client/sse.ts";
import { decodeEscapedText, EscapedText } from "../../src/client/text-bytes.ts";
import { baselineExtractOpenaiText, baselineScanOpenaiEvent } from "./baseline-openai-events.ts";
import { percentile } from "./stats.ts";

const encoder = new TextEncoder();
const WORDS = [" the", " cat", " sat", " on", " café", " 猫", " mat", " 🙂", ' "q"', "\n"];

/** One chunk as vLLM writes it with continuous usage stats (protocol.md §3.2). */
function chunkLine(request: number, token: number, outputLen: number): string {
  const last = token === outputLen;
  return `data: ${JSON.stringify({
    id: `cmpl-${request.toString(16).padStart(32, "0")}`,
    object: "text_completion",
    created: 1785000000,
    model: "Qwen/Qwen3-8B",
    choices: [{ index: 0, text: WORDS[(request + token) % WORDS.length], logprobs: null, finish_reason: last ? "length" : null, stop_reason: null }],
    usage: { prompt_tokens: 70000, total_tokens: 70000 + token, completion_tokens: token },
  })}\n\n`;
}

/** The body of one stream cut into reads of `eventsPerRead` events, each read a buffer of its own. */
function streamReads(request: number, outputLen: number, eventsPerRead: number): Uint8Array[] {
  const lines: string[] = [];
  for (let token = 1; token <= outputLen; token++) lines.push(chunkLine(request, token, outputLen));
  lines.push(
    `data: ${JSON.stringify({ id: "c", object: "text_completion", created: 1, model: "m", choices: [], usage: { prompt_tokens: 70000, total_tokens: 70000 + outputLen, completion_tokens: outputLen, prompt_tokens_details: { cached_tokens: 69984 } } })}\n\n`,
  );
  lines.push("data: [DONE]\n\n");
  const reads: Uint8Array[] = [];
  for (let k = 0; k < lines.length; k += eventsPerRead) reads.push(encoder.encode(lines.slice(k, k + eventsPerRead).join("")));
  return reads;
}

/** What one pass over every stream did. */
interface PassResult {
  /** Token events (the usage-only chunk and [DONE] of each stream are read, not counted). */
  events: number;
  /** Bytes each request holds for its text once its stream ended (before the text is decoded). */
  retainedBytes: number;
  /** Bytes of network buffers the kept payload views pin while their stream runs, at its end. */
  pinnedBytes: number;
  text: string;
}

function passBefore(streams: Uint8Array[][]): PassResult {
  let events = 0;
  let retainedBytes = 0;
  let pinnedBytes = 0;
  const kept: Uint8Array[][] = [];
  for (const reads of streams) {
    const fields = createEventFields();
    const payloads: Uint8Array[] = [];
    const splitter = createSseSplitter((payload) => {
      if (baselineScanOpenaiEvent(payload, fields) !== "tokens") return;
      events++;
      payloads.push(payload);
    });
    for (const read of reads) splitter.push(read);
    splitter.finish();
    const pinned = new Set(payloads.map((p) => p.buffer));
    for (const buffer of pinned) pinnedBytes += buffer.byteLength;
    const copies = payloads.map((p) => p.slice());
    for (const copy of copies) retainedBytes += copy.length;
    kept.push(copies);
  }
  let text = "";
  for (const copies of kept) for (const copy of copies) text += baselineExtractOpenaiText(copy);
  return { events, retainedBytes, pinnedBytes, text };
}

function passAfter(streams: Uint8Array[][], outputLen: number): PassResult {
  let events = 0;
  let retainedBytes = 0;
  const kept: Uint8Array[] = [];
  for (const reads of streams) {
    const fields = createEventFields();
    const escaped = new EscapedText(outputLen);
    const splitter = createSseSplitter((payload) => {
      if (scanOpenaiEvent(payload, fields) !== "tokens") return;
      events++;
      escaped.append(payload, fields.textStart, fields.textEnd);
    });
    for (const read of reads) splitter.push(read);
    splitter.finish();
    const bytes = escaped.take();
    retainedBytes += bytes.length;
    kept.push(bytes);
  }
  let text = "";
  for (const bytes of kept) text += decodeEscapedText(bytes);
  return { events, retainedBytes, pinnedBytes: 0, text };
}

/** Before and after, one delivery shape. */
export interface MicroComparison {
  streams: number;
  outputLen: number;
  eventsPerRead: number;
  /** Mean size of one token chunk's `data:` line, bytes. */
  chunkBytes: number;
  /** CPU µs per token event, median over rounds, and every round. */
  beforeUsPerEvent: number;
  afterUsPerEvent: number;
  beforeRoundsUs: number[];
  afterRoundsUs: number[];
  /** Per request, at the end of its stream. */
  beforeRetainedBytes: number;
  afterRetainedBytes: number;
  beforePinnedBytes: number;
  /** Both sides produced the same text. */
  sameText: boolean;
}

const cpuUs = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/**
 * Runs both sides `rounds` times after a warm-up, alternating which goes first, on fresh copies of the same reads
 * (a pass's reads are never reused, as network buffers never are). Each timed pass ends with a full GC so that each side pays for its own garbage
 * and for tracing what it keeps.
 */
export function compareMicro(streams: number, outputLen: number, eventsPerRead: number, rounds: number): MicroComparison {
  const template = Array.from({ length: streams }, (_, r) => streamReads(r, outputLen, eventsPerRead));
  const fresh = (): Uint8Array[][] => template.map((reads) => reads.map((read) => read.slice()));
  const before: number[] = [];
  const after: number[] = [];
  let last: { before: PassResult; after: PassResult } | null = null;
  // One untimed round first: both sides compiled before anything counts.
  passBefore(fresh());
  passAfter(fresh(), outputLen);
  for (let round = 0; round < rounds; round++) {
    const sides: Array<"before" | "after"> = round % 2 === 0 ? ["before", "after"] : ["after", "before"];
    const results: Partial<Record<"before" | "after", PassResult>> = {};
    for (const side of sides) {
      const input = fresh();
      Bun.gc(true);
      const t0 = cpuUs();
      const result = side === "before" ? passBefore(input) : passAfter(input, outputLen);
      Bun.gc(true);
      const spent = cpuUs() - t0;
      (side === "before" ? before : after).push(spent / result.events);
      results[side] = result;
    }
    last = { before: results.before as PassResult, after: results.after as PassResult };
  }
  const b = last?.before;
  const a = last?.after;
  return {
    streams,
    outputLen,
    eventsPerRead,
    chunkBytes: template.reduce((n, reads) => n + reads.reduce((m, read) => m + read.length, 0), 0) / (streams * (outputLen + 2)),
    beforeUsPerEvent: percentile(before, 50),
    afterUsPerEvent: percentile(after, 50),
    beforeRoundsUs: before,
    afterRoundsUs: after,
    beforeRetainedBytes: b ? b.retainedBytes / streams : NaN,
    afterRetainedBytes: a ? a.retainedBytes / streams : NaN,
    beforePinnedBytes: b ? b.pinnedBytes / streams : NaN,
    sameText: b !== undefined && a !== undefined && b.text === a.text && a.text.length > 0,
  };
}
