// The edges of the two event scanners that the mutation run (npm run mutants) found unguarded: the full-parse
// readings, the output-ids extractors, tier values that are not counts, and byte offsets that a missing key would
// turn into reads of unrelated bytes.
import { afterEach, describe, expect, spyOn, test } from "bun:test";
import { extractOpenaiOutputIds, extractOpenaiText, scanOpenaiEvent, scanOpenaiEventByParsing } from "../../../src/backends/openai-events.ts";
import { extractOutputIds, scanSglangEvent } from "../../../src/backends/sglang-events.ts";
import { createEventFields, type EventFields } from "../../../src/backends/types.ts";

const encoder = new TextEncoder();
const bytes = (json: string): Uint8Array => encoder.encode(json);

function sglang(json: string): { kind: string } & EventFields {
  const fields = createEventFields();
  const kind = scanSglangEvent(bytes(json), fields);
  return { kind, ...fields };
}

type OpenaiScan = (payload: Uint8Array, out: EventFields) => string;
const openaiReaders: [string, OpenaiScan][] = [
  ["byte readers", scanOpenaiEvent],
  ["JSON.parse", scanOpenaiEventByParsing],
];

const tiers = (f: EventFields) => [f.cachedDeviceTokens, f.cachedHostTokens, f.cachedStorageTokens];

describe("SGLang native scanner", () => {
  let parseSpy: ReturnType<typeof spyOn> | undefined;
  afterEach(() => parseSpy?.mockRestore());

  test("no completion_tokens key: the full parse says so, whatever digit sits where the key's value would be", () => {
    // Byte 19 is where a value would start if the key were found at -1: a digit there must not be read as a count.
    const json = `{"text":"abcdefghij5","meta_info":{"finish_reason":null,"cached_tokens":0}}`;
    expect(json[19]).toBe("5");
    expect(sglang(json)).toMatchObject({ kind: "invalid", completionTokens: 0, message: "event has no meta_info.completion_tokens" });
  });

  test("no cached_tokens key: -1, even with a digit where the key's value would be", () => {
    const json = `{"text":"abcdef7","meta_info":{"finish_reason":null,"completion_tokens":3}}`;
    expect(json[15]).toBe("7");
    expect(sglang(json)).toMatchObject({ kind: "tokens", completionTokens: 3, cachedTokens: -1 });
  });

  test("no cached_tokens_details: the tiers are unknown, even with a null where the key's value would be", () => {
    const json = `{"text":"abcdefghijklmnnull","meta_info":{"finish_reason":null,"completion_tokens":1,"cached_tokens":4}}`;
    expect(json.slice(23, 27)).toBe("null");
    expect(tiers(sglang(json))).toEqual([-1, -1, -1]);
  });

  test("finish_reason after completion_tokens (another key order) is still read without JSON.parse", () => {
    parseSpy = spyOn(JSON, "parse");
    const r = sglang(`{"text":"a","meta_info":{"completion_tokens":2,"cached_tokens":1,"finish_reason":null}}`);
    expect(r).toMatchObject({ kind: "tokens", completionTokens: 2, cachedTokens: 1 });
    expect(parseSpy).toHaveBeenCalledTimes(0);
  });

  test("details that are not an object, or never close, leave the tiers unknown on both readers", () => {
    const fast = `{"text":"a","meta_info":{"finish_reason":null,"completion_tokens":1,"cached_tokens":4,"cached_tokens_details":5}}`;
    expect(tiers(sglang(fast))).toEqual([-1, -1, -1]);
    const parsed = `{"text":"a","meta_info":{"finish_reason":{"type":"stop"},"completion_tokens":1,"cached_tokens":4,"cached_tokens_details":"x"}}`;
    expect(tiers(sglang(parsed))).toEqual([-1, -1, -1]);
    const unclosed = `{"text":"a","meta_info":{"finish_reason":null,"completion_tokens":1,"cached_tokens":4,"cached_tokens_details":{"device":4`;
    expect(tiers(sglang(unclosed))).toEqual([-1, -1, -1]);
  });

  test("a tier key after the details object is not the tier's", () => {
    const json = `{"text":"a","meta_info":{"finish_reason":null,"completion_tokens":1,"cached_tokens":6,"cached_tokens_details":{"host":6},"device":9}}`;
    expect(tiers(sglang(json))).toEqual([0, 6, 0]);
  });

  test("the full parse: tiers absent are unknown, tier values that are not counts are 0", () => {
    const stop = `"finish_reason":{"type":"stop"},"completion_tokens":2,"cached_tokens":4`;
    expect(tiers(sglang(`{"meta_info":{${stop}}}`))).toEqual([-1, -1, -1]);
    expect(tiers(sglang(`{"meta_info":{${stop},"cached_tokens_details":null}}`))).toEqual([0, 0, 0]);
    expect(tiers(sglang(`{"meta_info":{${stop},"cached_tokens_details":{"device":"7","host":2.5,"storage":-3}}}`))).toEqual([0, 0, 0]);
    expect(tiers(sglang(`{"meta_info":{${stop},"cached_tokens_details":{"device":1,"host":2,"storage":3}}}`))).toEqual([1, 2, 3]);
  });

  test("the full parse keeps only numbers and strings where they belong", () => {
    const r = sglang(`{"meta_info":{"finish_reason":{"type":5},"completion_tokens":2,"cached_tokens":"4"}}`);
    expect(r).toMatchObject({ kind: "tokens", completionTokens: 2, cachedTokens: -1 });
    expect(r.finishType).toBeNull();
    const noCount = sglang(`{"meta_info":{"finish_reason":{"type":"stop"},"completion_tokens":"2"}}`);
    expect(noCount).toMatchObject({ kind: "invalid", completionTokens: 0 });
    // A count that is not a plain integer sends the event to the parse; no finish_reason key there is null, not undefined.
    const noFinish = sglang(`{"meta_info":{"completion_tokens":2.0e0}}`);
    expect(noFinish).toMatchObject({ kind: "tokens", completionTokens: 2 });
    expect(noFinish.finishType).toBeNull();
  });

  test("an abort without a message says aborted", () => {
    expect(sglang(`{"meta_info":{"finish_reason":{"type":"abort"},"completion_tokens":0}}`)).toMatchObject({
      kind: "abort",
      message: "aborted",
    });
  });

  test("payloads that are JSON but not an event object, or lack meta_info, say which", () => {
    for (const json of ["5", "[1,2]", `"completion_tokens"`, "null"]) {
      expect(sglang(json)).toMatchObject({ kind: "invalid", message: "event is not a JSON object" });
    }
    expect(sglang(`{"text":"a"}`)).toMatchObject({ kind: "invalid", message: "event has no meta_info" });
  });

  test("extractOutputIds: the ids, or null", () => {
    expect(extractOutputIds(bytes(`{"text":"a","output_ids":[5,6,7],"meta_info":{}}`))).toEqual([5, 6, 7]);
    expect(extractOutputIds(bytes(`{"text":"a"}`))).toBeNull();
    expect(extractOutputIds(bytes(`{"output_ids":[1,"2"]}`))).toBeNull();
    expect(extractOutputIds(bytes("not json"))).toBeNull();
    expect(extractOutputIds(bytes("null"))).toBeNull();
  });
});

describe("OpenAI scanner", () => {
  test("scanOpenaiEventByParsing reads [DONE] as done", () => {
    expect(scanOpenaiEventByParsing(bytes("[DONE]"), createEventFields())).toBe("done");
  });

  for (const [name, scan] of openaiReaders) {
    describe(name, () => {
      const run = (jsons: string[]) => {
        const fields = createEventFields();
        const kinds = jsons.map((json) => scan(bytes(json), fields));
        return { kinds, fields };
      };

      test("a chunk without tiers leaves every tier unknown", () => {
        const { fields } = run([`{"choices":[{"index":0,"text":"a","finish_reason":null}]}`]);
        expect(tiers(fields)).toEqual([-1, -1, -1]);
      });

      test("cached tokens are not carried from an earlier chunk's usage", () => {
        const { fields } = run([
          `{"choices":[{"index":0,"text":"a","finish_reason":null}],"usage":{"prompt_tokens":9,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":7}}}`,
          `{"choices":[{"index":0,"text":"b","finish_reason":null}]}`,
        ]);
        expect(fields.cachedTokens).toBe(-1);
      });

      test("llama.cpp's timings.cache_n is the cached count only when usage has none, 0 included", () => {
        const chunk = (usage: string, timings: string) => `{"choices":[{"index":0,"text":"a","finish_reason":"stop"}]${usage}${timings}}`;
        const usageWith = (cached: number) => `,"usage":{"prompt_tokens":9,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":${cached}}}`;
        expect(run([chunk(usageWith(5), `,"timings":{"cache_n":9}`)]).fields.cachedTokens).toBe(5);
        expect(run([chunk(usageWith(0), `,"timings":{"cache_n":9}`)]).fields.cachedTokens).toBe(0);
        expect(run([chunk("", `,"timings":{"cache_n":0}`)]).fields.cachedTokens).toBe(0);
        expect(run([chunk("", `,"timings":{"cache_n":12}`)]).fields.cachedTokens).toBe(12);
        expect(run([chunk("", `,"timings":{"prompt_n":3}`)]).fields.cachedTokens).toBe(-1);
      });

      test("a usage chunk without prompt_tokens_details never throws and has no cached count", () => {
        const { kinds, fields } = run([`{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3}}`]);
        expect(kinds).toEqual(["other"]);
        expect(fields).toMatchObject({ completionTokens: 3, cachedTokens: -1 });
      });

      test("tiers from usage.prompt_tokens_details, from sglext; values that are not counts are 0; garbage is unknown", () => {
        const usage = (details: string) =>
          `{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":7,"cached_tokens_details":${details}}}}`;
        expect(tiers(run([usage(`{"device":3,"host":4}`)]).fields)).toEqual([3, 4, 0]);
        expect(tiers(run([usage(`null`)]).fields)).toEqual([0, 0, 0]);
        expect(tiers(run([usage(`{"device":"7","host":2.5,"storage":-3}`)]).fields)).toEqual([0, 0, 0]);
        expect(tiers(run([usage(`5`)]).fields)).toEqual([-1, -1, -1]);
        const sglext = `{"choices":[{"index":0,"text":"a","finish_reason":null}],"sglext":{"cached_tokens_details":{"device":2,"storage":1}}}`;
        expect(tiers(run([sglext]).fields)).toEqual([2, 0, 1]);
      });

      test("a choice without finish_reason has finishType null, not undefined", () => {
        const { kinds, fields } = run([`{"choices":[{"index":0,"text":"a"}]}`]);
        expect(kinds).toEqual(["tokens"]);
        expect(fields.finishType).toBeNull();
      });

      test("JSON that is not an object is invalid, saying so", () => {
        for (const json of ["5", "[1]", "null", `"choices"`]) {
          expect(run([json])).toMatchObject({ kinds: ["invalid"], fields: { message: "event is not a JSON object" } });
        }
      });
    });
  }

  test("extractOpenaiText needs a choices array", () => {
    expect(extractOpenaiText(bytes(`{"choices":{"0":{"text":"hi"}}}`))).toBe("");
    expect(extractOpenaiText(bytes(`{"choices":[{"delta":{"content":"hi"}}]}`))).toBe("hi");
  });

  test("extractOpenaiOutputIds: choices[0].token_ids, or null", () => {
    expect(extractOpenaiOutputIds(bytes(`{"choices":[{"index":0,"text":"a","token_ids":[4,5]}]}`))).toEqual([4, 5]);
    expect(extractOpenaiOutputIds(bytes(`{"choices":{"0":{"token_ids":[4,5]}}}`))).toBeNull();
    expect(extractOpenaiOutputIds(bytes(`{"choices":["x"]}`))).toBeNull();
    expect(extractOpenaiOutputIds(bytes(`{"choices":[]}`))).toBeNull();
    expect(extractOpenaiOutputIds(bytes(`{"usage":{}}`))).toBeNull();
    expect(extractOpenaiOutputIds(bytes("not json"))).toBeNull();
    expect(extractOpenaiOutputIds(bytes("null"))).toBeNull();
  });
});
