/**
 * What the mock "generates" and how it reports it: deterministic output tokens and SGLang-shaped
 * payloads (docs/protocol.md §1.3), built as whole objects whose key order matches SGLang's meta_info.
 * The mock never emits EOS, so every request runs to max_new_tokens whatever ignore_eos says.
 */

/** Words the output tokens decode to; the non-ASCII ones exercise multi-byte UTF-8 paths in clients. */
export const OUTPUT_WORDS = [" the", " cat", " sat", " on", " café", " 猫", " mat", " 🙂"] as const;

/** Token id of the i-th generated token (0-based); deterministic and below vocabSize. */
export function outputTokenId(index: number, vocabSize: number): number {
  // Step 7 is coprime with the 8 words, so consecutive tokens cycle through all of them.
  return (1000 + index * 7) % vocabSize;
}

/** The text a generated token id decodes to. */
export function outputTokenText(tokenId: number): string {
  return OUTPUT_WORDS[tokenId % OUTPUT_WORDS.length] as string;
}

/** Everything meta_info needs about one request. */
export interface MetaState {
  rid: string;
  promptTokens: number;
  cachedTokens: number;
  /** Of cachedTokens, those loaded back from the host tier (the rest came from the device). */
  cachedHostTokens: number;
  /** performance.now() when the request arrived, for e2e_latency. */
  receivedAtMs: number;
}

/** finish_reason values the mock produces. */
export type FinishReason = { type: "length"; length: number } | { type: "abort"; message: string; status_code: number; err_type: string };

const TIME_ORIGIN_MS = performance.timeOrigin;

/** Wall-clock seconds, as Python's time.time(). */
export function wallClockS(): number {
  return (TIME_ORIGIN_MS + performance.now()) / 1000;
}

/**
 * meta_info in SGLang's key order. e2e_latency is added when the request finished (final event);
 * response_sent_to_client_ts when it is sent (first streamed event, or the one non-streaming object).
 */
export function buildMetaInfo(meta: MetaState, completionTokens: number, finishReason: FinishReason | null, withSentTs: boolean): Record<string, unknown> {
  const info: Record<string, unknown> = {
    id: meta.rid,
    finish_reason: finishReason,
    prompt_tokens: meta.promptTokens,
    weight_version: "default",
    num_retractions: 0,
    reasoning_tokens: 0,
    completion_tokens: completionTokens,
    cached_tokens: meta.cachedTokens,
    cached_tokens_details: cachedTokensDetails(meta),
  };
  if (finishReason !== null) info.e2e_latency = (performance.now() - meta.receivedAtMs) / 1000;
  if (withSentTs) info.response_sent_to_client_ts = wallClockS();
  return info;
}

/** SGLang's per-tier breakdown (output_streamer.py get_cached_tokens_details): null when nothing was cached. */
export function cachedTokensDetails(meta: MetaState): { device: number; host: number } | null {
  if (meta.cachedTokens <= 0) return null;
  return { device: meta.cachedTokens - meta.cachedHostTokens, host: meta.cachedHostTokens };
}

/** Generated tokens of one request: cumulative ids and text, plus what was already reported. */
export class GeneratedOutput {
  readonly ids: number[] = [];
  text = "";
  private reportedTokens = 0;
  private reportedTextLength = 0;
  private readonly vocabSize: number;

  constructor(vocabSize: number) {
    this.vocabSize = vocabSize;
  }

  /** Generate tokens up to a cumulative count. */
  growTo(completionTokens: number): void {
    for (let i = this.ids.length; i < completionTokens; i++) {
      const id = outputTokenId(i, this.vocabSize);
      this.ids.push(id);
      this.text += outputTokenText(id);
    }
  }

  /** text and output_ids for the next event: everything so far, or only what is new (incremental). */
  nextSegment(incremental: boolean): { text: string; outputIds: number[] } {
    const segment = incremental
      ? { text: this.text.slice(this.reportedTextLength), outputIds: this.ids.slice(this.reportedTokens) }
      : { text: this.text, outputIds: this.ids.slice() };
    this.reportedTokens = this.ids.length;
    this.reportedTextLength = this.text.length;
    return segment;
  }
}

/** One SSE event: `data: ` + compact JSON + blank line. */
export function sseEvent(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

/** The stream terminator SGLang always sends. */
export const SSE_DONE = "data: [DONE]\n\n";
