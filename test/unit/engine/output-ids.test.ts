/** A turn's answer as ids: the server's output_ids (cumulative or delta), else the text re-tokenized (approximate). */
import { describe, expect, test } from "bun:test";
import { sglangBackend } from "../../../src/backends/sglang.ts";
import { openaiBackend } from "../../../src/backends/openai.ts";
import type { RequestRecord } from "../../../src/schema/record.ts";
import { resolveTurnOutput } from "../../../src/engine/output-ids.ts";
import type { LoadedTokenizer } from "../../../src/workload/tokenizer.ts";

const encoder = new TextEncoder();
const tokenizer = {
  encode: (text: string) =>
    Uint32Array.from(
      text
        .split(" ")
        .filter((w) => w !== "")
        .map((w) => w.length),
    ),
} as unknown as LoadedTokenizer;

/** A record as the stream leaves it: the kept payloads, and the text as raw JSON string content (EscapedText). */
function rec(payloads: string[], outputLen: number, text = ""): RequestRecord {
  return {
    textBytes: encoder.encode(JSON.stringify(text).slice(1, -1)),
    index: 0,
    ok: true,
    failureKind: null,
    failureMessage: "",
    httpStatus: 200,
    promptLen: 10,
    intendedMs: 0,
    startMs: 0,
    firstTokenMs: 0,
    lastEventMs: 0,
    ttftMs: 1,
    latencyMs: 2,
    outputLen,
    cachedTokens: 0,
    cachedDeviceTokens: -1,
    cachedHostTokens: -1,
    cachedStorageTokens: -1,
    itlMs: new Float64Array(0),
    tokenEvents: 2,
    finishReason: "length",
    generatedText: "",
    payloads: payloads.map((p) => encoder.encode(p)),
  };
}
const ev = (text: string, ids: number[], n: number) => JSON.stringify({ text, output_ids: ids, meta_info: { completion_tokens: n } });

describe("resolveTurnOutput", () => {
  test("cumulative: the last event's output_ids", () => {
    const out = resolveTurnOutput(rec([ev(" a bb ccc", [5, 6, 7], 3)], 3), sglangBackend, "cumulative", tokenizer);
    expect(out).toEqual({ ids: Uint32Array.of(5, 6, 7), approximate: false });
  });

  test("incremental: every event's ids in order", () => {
    const out = resolveTurnOutput(rec([ev(" a", [5], 1), ev(" bb ccc", [6, 7], 3)], 3), sglangBackend, "incremental", tokenizer);
    expect(out).toEqual({ ids: Uint32Array.of(5, 6, 7), approximate: false });
  });

  test("ids that do not add up to completion_tokens (delta ids with cumulative text, SGLang 0.5.0-0.5.5): the text, approximate", () => {
    const out = resolveTurnOutput(rec([ev(" a bb ccc", [7], 3)], 3, " a bb ccc"), sglangBackend, "cumulative", tokenizer);
    expect(out).toEqual({ ids: Uint32Array.of(1, 2, 3), approximate: true });
  });

  test("a backend that returns text only: re-tokenized, approximate", () => {
    const chunk = (t: string) => JSON.stringify({ choices: [{ index: 0, text: t }] });
    const out = resolveTurnOutput(rec([chunk(" a"), chunk(" bb"), chunk(" ccc")], 3, " a bb ccc"), openaiBackend, "incremental", tokenizer);
    expect(out).toEqual({ ids: Uint32Array.of(1, 2, 3), approximate: true });
    const withIds = (t: string, ids: number[]) => JSON.stringify({ choices: [{ index: 0, text: t, token_ids: ids }] });
    expect(resolveTurnOutput(rec([withIds(" a", [9]), withIds(" bb", [8])], 2), openaiBackend, "incremental", tokenizer)).toEqual({
      ids: Uint32Array.of(9, 8),
      approximate: false,
    });
  });
});
