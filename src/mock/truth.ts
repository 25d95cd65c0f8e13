/**
 * The mock's ground truth (--truth FILE): one JSONL line per finished /generate or /v1/completions
 * request, with the epoch time at which each token event was written to the socket, so a test can
 * compare what a client measured with what the server did. Lines are buffered and appended at most
 * every 100 ms (and on stop) so the hot path only pushes a string.
 *
 * Every line also carries the mock's cache behaviour (truthSettings: when prompts enter the cache, whether running
 * requests' pages can be evicted, whether answers are cached), so a file that several runs appended to says, line by
 * line, which legal behaviour produced it.
 */
import { appendFileSync } from "node:fs";
import type { MockOptions } from "./options.ts";

/** How a request ended: "fault:<kind>" when an injected fault fired (the request may still have completed). */
export type TruthEnd = "done" | `fault:${string}` | "disconnect" | "error";

const FLUSH_INTERVAL_MS = 100;

// Read once: the getter costs more than performance.now() itself, and it is read for every event.
const TIME_ORIGIN_MS = performance.timeOrigin;

/** Epoch milliseconds now: a clock every process on this host shares (performance.now() alone is per process). */
const epochMs = (): number => TIME_ORIGIN_MS + performance.now();

/** The cache behaviour every truth line records: what the radix cache does, or llama.cpp's slots' fixed way. */
export interface TruthSettings {
  /** "prefill": a prompt is cached once its prefill ends; "finish": only when its request ends. */
  insert_at: MockOptions["insertAt"];
  /** "evictable": a running request's cached pages can be evicted; "locked": they are held until it ends. */
  inflight_pages: MockOptions["inflightPages"];
  /** Whether a finished request's answer is cached beside its prompt. */
  output_cache: boolean;
}

/** The settings a mock started with `opts` writes into each truth line. */
export function truthSettings(opts: MockOptions): TruthSettings {
  // A llama.cpp slot takes the prompt at the end of its prefill, keeps the answer, and no other request takes a busy slot.
  if (opts.personality === "llamacpp") return { insert_at: "prefill", inflight_pages: "locked", output_cache: true };
  return { insert_at: opts.insertAt, inflight_pages: opts.inflightPages, output_cache: !opts.noOutputCache };
}

/** Buffered append-only writer of truth lines. */
export class TruthLog {
  private readonly file: string;
  /** Appended to every line. */
  readonly settings: TruthSettings | null;
  private lines: string[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(file: string, settings: TruthSettings | null = null) {
    this.file = file;
    this.settings = settings;
  }

  /** Queue one line (an object serialized as compact JSON). */
  append(entry: Record<string, unknown>): void {
    this.lines.push(JSON.stringify(entry) + "\n");
    this.timer ??= setTimeout(() => this.flush(), FLUSH_INTERVAL_MS);
  }

  /** Write every queued line now. */
  flush(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.lines.length === 0) return;
    const text = this.lines.join("");
    this.lines = [];
    appendFileSync(this.file, text);
  }
}

/** What one request did, collected as it runs and written once when it ends. */
export class RequestTrace {
  private readonly log: TruthLog | null;
  private readonly requestId: string | null;
  private readonly receivedEpochMs: number;
  rid: string | null = null;
  promptTokens = 0;
  /** Cached prompt tokens the server reported (0 for a request a forget fault hit). */
  cachedTokens = 0;
  /** Cached tokens a forget fault made the request recompute (what it would have reported); 0 otherwise. */
  forgottenTokens = 0;
  completionTokens = 0;
  private readonly eventsMs: number[] = [];
  private readonly eventsTokens: number[] = [];
  private ended = false;

  /** `requestId` is the x-request-id header; `log` null makes every method a no-op. */
  constructor(log: TruthLog | null, requestId: string | null) {
    this.log = log;
    this.requestId = requestId;
    this.receivedEpochMs = log === null ? 0 : epochMs();
  }

  /** A token event carrying `completionTokens` (cumulative) was just written to the socket. */
  event(completionTokens: number): void {
    this.completionTokens = completionTokens;
    if (this.log === null) return;
    this.eventsMs.push(epochMs());
    this.eventsTokens.push(completionTokens);
  }

  /** Write the line; later calls do nothing (the first way a request ended is the one that counts). */
  finish(end: TruthEnd): void {
    if (this.ended || this.log === null) return;
    this.ended = true;
    this.log.append({
      request_id: this.requestId,
      rid: this.rid,
      received_ms: this.receivedEpochMs,
      prompt_tokens: this.promptTokens,
      cached_tokens: this.cachedTokens,
      forgotten_tokens: this.forgottenTokens,
      completion_tokens: this.completionTokens,
      events_ms: this.eventsMs,
      events_tokens: this.eventsTokens,
      end,
      ...this.log.settings,
    });
  }
}
