import { describe, expect, test } from "bun:test";
import { parseGenerateBody } from "../../../src/mock/generate-request.ts";

const parse = (body: unknown, vocabSize = 100) => parseGenerateBody(JSON.stringify(body), vocabSize);

describe("parseGenerateBody", () => {
  test("SGLang's defaults when sampling_params is absent", () => {
    expect(parse({ input_ids: [1, 2, 3] })).toEqual({
      ok: true,
      params: {
        inputIds: [1, 2, 3],
        stream: false,
        rid: null,
        maxNewTokens: 128,
        temperature: 1,
        ignoreEos: false,
        streamInterval: null,
        returnLogprob: false,
        topLogprobsNum: 0,
      },
    });
  });

  test("reads the fields a benchmark sends and ignores unknown top-level keys", () => {
    const parsed = parse({
      input_ids: [0, 99],
      sampling_params: { max_new_tokens: 0, temperature: 0, ignore_eos: true, top_p: 0.9 },
      stream: true,
      rid: "x",
      return_logprob: false,
      whatever: 1,
    });
    expect(parsed).toEqual({
      ok: true,
      params: {
        inputIds: [0, 99],
        stream: true,
        rid: "x",
        maxNewTokens: 0,
        temperature: 0,
        ignoreEos: true,
        streamInterval: null,
        returnLogprob: false,
        topLogprobsNum: 0,
      },
    });
  });

  test("shape problems are bad requests; semantic ones are value errors that keep the stream flag", () => {
    const kindOf = (body: unknown) => {
      const parsed = parse(body);
      return parsed.ok ? "ok" : parsed.kind;
    };
    expect(kindOf({ input_ids: [100] })).toBe("bad_request");
    expect(kindOf({ input_ids: [-1] })).toBe("bad_request");
    expect(kindOf({ input_ids: [true] })).toBe("bad_request");
    expect(kindOf({ input_ids: [[1]] })).toBe("bad_request");
    expect(kindOf({ text: "hi" })).toBe("bad_request");
    expect(kindOf({ input_ids: [1], stream: "yes" })).toBe("bad_request");
    expect(kindOf({ input_ids: [1], sampling_params: { max_new_tokens: 1.5 } })).toBe("bad_request");
    expect(kindOf({ input_ids: [1], sampling_params: { nonsense: 1 } })).toBe("bad_request");
    expect(kindOf([1, 2])).toBe("bad_request");
    expect(kindOf({ input_ids: [1], sampling_params: { max_new_tokens: -1 } })).toBe("value_error");
    expect(kindOf({ input_ids: [1], sampling_params: { temperature: -0.5 } })).toBe("value_error");
    expect(kindOf({ stream: true })).toBe("value_error");
    const noInput = parse({ stream: true });
    expect(noInput.ok === false && noInput.stream).toBe(true);
    expect(parseGenerateBody("{", 100).ok).toBe(false);
  });
});
