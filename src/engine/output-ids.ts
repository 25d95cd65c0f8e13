/**
 * The ids a turn's answer adds to its conversation: the server's own output ids where the stream carries them
 * (SGLang native `output_ids`, cumulative or delta as the server's text, docs/protocol.md §1.3; llama.cpp native
 * `tokens`, one streamed token's id per event), checked against the server's completion count; otherwise the text
 * re-tokenized with the run's tokenizer, and the turn's successors flagged approximate (the server may have
 * tokenized its answer differently). llama.cpp never streams the id of a token whose text ends inside a UTF-8
 * character (llamacpp-events.ts): its ids then fall short of the count, and the turn is approximate too.
 */
import type { Backend } from "../backends/types.ts";
import { resolveGeneratedText } from "../client/stream-events.ts";
import type { RequestRecord } from "../schema/record.ts";
import type { LoadedTokenizer } from "../workload/tokenizer.ts";

export interface TurnOutput {
  ids: Uint32Array;
  /** Re-tokenized from text, not the server's ids. */
  approximate: boolean;
}

/** Call once the request ended, before anything else resolves its text. */
export function resolveTurnOutput(rec: RequestRecord, backend: Backend, textMode: "cumulative" | "incremental", tokenizer: LoadedTokenizer): TurnOutput {
  const ids = idsFromPayloads(rec.payloads ?? [], backend, !backend.deltaText && textMode === "cumulative");
  delete rec.payloads;
  if (ids !== null && ids.length === rec.outputLen) return { ids: Uint32Array.from(ids), approximate: false };
  resolveGeneratedText(rec);
  return { ids: tokenizer.encode(rec.generatedText), approximate: true };
}

/** The last payload's ids when each event carries all so far, else every payload's in order; null if any lacks them. */
function idsFromPayloads(payloads: readonly Uint8Array[], backend: Backend, cumulative: boolean): number[] | null {
  if (payloads.length === 0) return null;
  if (cumulative) return backend.extractOutputIds(payloads[payloads.length - 1] as Uint8Array);
  const all: number[] = [];
  for (const payload of payloads) {
    const ids = backend.extractOutputIds(payload);
    if (ids === null) return null;
    for (const id of ids) all.push(id);
  }
  return all;
}
