/**
 * SGLang /generate stream events built from pre-serialized pieces: byte for byte what JSON.stringify of
 * {text, output_ids, meta_info} gives (output.ts's buildMetaInfo key order), without building or
 * serializing an object per event. The escaped text and the id list grow by one token at a time, so an
 * event costs string concatenation of the new tokens plus a few numbers.
 */
import { cachedTokensDetails, OUTPUT_WORDS, outputTokenId, outputTokenText, wallClockS, type MetaState } from "./output.ts";

/** Each output word as it appears inside a JSON string (JSON.stringify minus the quotes). */
const WORD_JSON: ReadonlyMap<string, string> = new Map(OUTPUT_WORDS.map((w) => [w, JSON.stringify(w).slice(1, -1)]));

/** Token events of one request, cumulative or incremental (SGLang --incremental-streaming-output). */
export class SglangEventBuilder {
  private readonly meta: MetaState;
  private readonly vocabSize: number;
  private readonly incremental: boolean;
  private generated = 0;
  /** Escaped text and comma-joined ids not yet reported (incremental) or so far (cumulative). */
  private textJson = "";
  private idsJson = "";
  private eventsBuilt = 0;
  /** `],"meta_info":{"id":...,"finish_reason":` */
  private readonly idPart: string;
  /** `,"prompt_tokens":...,"completion_tokens":` */
  private readonly countsPart: string;
  /** `,"cached_tokens":...,"cached_tokens_details":...`, built at the first event (cached tokens known by then). */
  private cachePart = "";

  constructor(meta: MetaState, vocabSize: number, incremental: boolean) {
    this.meta = meta;
    this.vocabSize = vocabSize;
    this.incremental = incremental;
    this.idPart = `],"meta_info":{"id":${JSON.stringify(meta.rid)},"finish_reason":`;
    this.countsPart = `,"prompt_tokens":${meta.promptTokens},"weight_version":"default","num_retractions":0,` + `"reasoning_tokens":0,"completion_tokens":`;
  }

  /**
   * The JSON payload of the event reporting `completionTokens` so far. `finishReasonJson` is null (running)
   * or a serialized finish_reason; `extraText` is appended to the text (a fault marker).
   */
  event(completionTokens: number, finishReasonJson: string | null, extraText: string): string {
    this.growTo(completionTokens);
    if (this.eventsBuilt === 0) {
      const details = JSON.stringify(cachedTokensDetails(this.meta));
      this.cachePart = `,"cached_tokens":${this.meta.cachedTokens},"cached_tokens_details":${details}`;
    }
    const text = extraText === "" ? this.textJson : this.textJson + JSON.stringify(extraText).slice(1, -1);
    let payload =
      `{"text":"${text}","output_ids":[${this.idsJson}${this.idPart}${finishReasonJson ?? "null"}` + `${this.countsPart}${completionTokens}${this.cachePart}`;
    if (finishReasonJson !== null) payload += `,"e2e_latency":${(performance.now() - this.meta.receivedAtMs) / 1000}`;
    if (this.eventsBuilt++ === 0) payload += `,"response_sent_to_client_ts":${wallClockS()}`;
    if (this.incremental) {
      this.textJson = "";
      this.idsJson = "";
    }
    return payload + "}}";
  }

  private growTo(completionTokens: number): void {
    for (let i = this.generated; i < completionTokens; i++) {
      const id = outputTokenId(i, this.vocabSize);
      const word = WORD_JSON.get(outputTokenText(id)) as string;
      this.textJson += word;
      this.idsJson = this.idsJson === "" ? `${id}` : `${this.idsJson},${id}`;
    }
    if (completionTokens > this.generated) this.generated = completionTokens;
  }
}
