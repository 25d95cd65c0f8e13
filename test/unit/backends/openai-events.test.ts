import { afterEach, describe, expect, spyOn, test } from "bun:test";
import { extractOpenaiText, locateOpenaiText, scanOpenaiEvent, scanOpenaiEventByParsing } from "../../../src/backends/openai-events.ts";
import { readPlainChunk } from "../../../src/backends/openai-plain.ts";
import { createSseSplitter } from "../../../src/client/sse.ts";
import { decodeEscapedText, EscapedText } from "../../../src/client/text-bytes.ts";
import { createEventFields, type EventFields } from "../../../src/backends/types.ts";
import { openaiChunkLine, openaiUsageLine } from "../../helpers/stream-servers.ts";

const encoder = new TextEncoder();

/** The payload of a `data: ...\n\n` line. */
const payloadOf = (line: string): Uint8Array => encoder.encode(line.slice("data: ".length).trimEnd());

function scanAll(lines: string[]): { kinds: string[]; fields: EventFields; snapshots: EventFields[] } {
  const fields = createEventFields();
  const snapshots: EventFields[] = [];
  const kinds = lines.map((line) => {
    const kind = scanOpenaiEvent(payloadOf(line), fields);
    snapshots.push({ ...fields });
    return kind;
  });
  return { kinds, fields, snapshots };
}

describe("scanOpenaiEvent: token counting", () => {
  test("continuous usage: the cumulative usage.completion_tokens is used as is (several tokens per chunk)", () => {
    const { kinds, snapshots } = scanAll([
      openaiChunkLine({ text: "a", completionTokens: 1, cachedTokens: 16 }),
      openaiChunkLine({ text: "bcd", completionTokens: 4, cachedTokens: 16 }),
      openaiChunkLine({ text: "e", completionTokens: 5, finish: "length", cachedTokens: 16 }),
      openaiUsageLine(5, 16),
      "data: [DONE]\n\n",
    ]);
    expect(kinds).toEqual(["tokens", "tokens", "tokens", "other", "done"]);
    expect(snapshots.map((s) => s.completionTokens).slice(0, 4)).toEqual([1, 4, 5, 5]);
    expect(snapshots[0]?.cachedTokens).toBe(16);
    expect(snapshots[2]?.finishType).toBe("length");
    // finishType is per chunk: the usage chunk has none.
    expect(snapshots[3]?.finishType).toBe(null);
  });

  test("no usage per chunk: each chunk with choices counts one token, even with empty text", () => {
    const { kinds, snapshots } = scanAll([
      openaiChunkLine({ text: "" }),
      openaiChunkLine({ text: "x" }),
      openaiChunkLine({ text: "", finish: "stop" }),
      openaiUsageLine(7),
    ]);
    expect(kinds).toEqual(["tokens", "tokens", "tokens", "other"]);
    // The usage-only chunk replaces the chunk count with the server's total.
    expect(snapshots.map((s) => s.completionTokens)).toEqual([1, 2, 3, 7]);
    expect(snapshots[3]?.cachedTokens).toBe(-1);
  });

  test("a usage chunk without completion_tokens keeps the running count", () => {
    const { snapshots } = scanAll([openaiChunkLine({ text: "a" }), `data: {"choices":[],"usage":{"prompt_tokens":5}}\n\n`]);
    expect(snapshots[1]?.completionTokens).toBe(1);
  });

  test("cached tokens from usage.prompt_tokens_details, 0 included; absent details -> -1", () => {
    expect(scanAll([openaiUsageLine(3, 0)]).fields.cachedTokens).toBe(0);
    expect(scanAll([openaiUsageLine(3, 48)]).fields.cachedTokens).toBe(48);
    expect(scanAll([openaiUsageLine(3)]).fields.cachedTokens).toBe(-1);
    expect(scanAll([`data: {"choices":[],"usage":{"completion_tokens":3,"prompt_tokens_details":null}}\n\n`]).fields.cachedTokens).toBe(-1);
  });

  test("llama.cpp style: usage inside the final chunk with finish_reason corrects the count", () => {
    const { kinds, snapshots } = scanAll([openaiChunkLine({ text: "a" }), openaiChunkLine({ text: "b", finish: "length", completionTokens: 4 })]);
    expect(kinds).toEqual(["tokens", "tokens"]);
    expect(snapshots.map((s) => s.completionTokens)).toEqual([1, 4]);
  });
});

describe("scanOpenaiEvent: unusual but valid chunks", () => {
  test("a usage count of 0 is taken as is, in a usage-only chunk and in a chunk with choices", () => {
    // The running count is 1 after the first chunk: a 0 from the server must replace it, not be skipped.
    const usageOnly = scanAll([openaiChunkLine({ text: "a" }), openaiUsageLine(0)]);
    expect(usageOnly.snapshots.map((s) => s.completionTokens)).toEqual([1, 0]);
    const withChoices = scanAll([openaiChunkLine({ text: "a" }), openaiChunkLine({ text: "", completionTokens: 0 })]);
    expect(withChoices.kinds).toEqual(["tokens", "tokens"]);
    expect(withChoices.snapshots.map((s) => s.completionTokens)).toEqual([1, 0]);
  });

  test("usage without completion_tokens in a chunk with choices counts one token", () => {
    const { snapshots } = scanAll([
      openaiChunkLine({ text: "a" }),
      `data: {"choices":[{"index":0,"text":"b","finish_reason":null}],"usage":{"prompt_tokens":5}}\n\n`,
    ]);
    expect(snapshots.map((s) => s.completionTokens)).toEqual([1, 2]);
  });

  test("a usage chunk without a choices key is 'other', like one with choices: []", () => {
    const { kinds, fields } = scanAll([`data: {"usage":{"completion_tokens":6,"prompt_tokens":5}}\n\n`]);
    expect(kinds).toEqual(["other"]);
    expect(fields.completionTokens).toBe(6);
  });

  test('"error": null is no error', () => {
    const { kinds, fields } = scanAll([`data: {"error":null,"choices":[{"index":0,"text":"a","finish_reason":null}]}\n\n`]);
    expect(kinds).toEqual(["tokens"]);
    expect(fields.message).toBe("");
  });

  test("finishType is a string or null, never undefined; a choice that is not an object has none", () => {
    const noKey = scanAll([`data: {"choices":[{"index":0,"text":"a"}]}\n\n`]);
    expect(noKey.kinds).toEqual(["tokens"]);
    expect(noKey.fields.finishType).toBeNull();
    const notObject = scanAll([`data: {"choices":[7]}\n\n`]);
    expect(notObject.kinds).toEqual(["tokens"]);
    expect(notObject.fields.finishType).toBeNull();
    expect(scanAll([`data: {"choices":[null]}\n\n`]).fields.finishType).toBeNull();
  });

  test("the message of an earlier failure is cleared by the next chunk", () => {
    const { snapshots } = scanAll([`data: {oops\n\n`, openaiChunkLine({ text: "a" })]);
    expect(snapshots[0]?.message).toContain("{oops");
    expect(snapshots[1]?.message).toBe("");
  });
});

describe("scanOpenaiEvent: failures", () => {
  test("error events (vLLM and SGLang shapes, bare string)", () => {
    const vllm = `data: {"error":{"message":"Internal server error","type":"InternalServerError","param":null,"code":500}}\n\n`;
    expect(scanAll([vllm])).toMatchObject({ kinds: ["error"], fields: { message: "Internal server error" } });
    const sglang = `data: {"error":{"object":"error","message":"overloaded","type":"SERVICE_UNAVAILABLE","param":null,"code":503}}\n\n`;
    expect(scanAll([sglang])).toMatchObject({ kinds: ["error"], fields: { message: "overloaded" } });
    expect(scanAll([`data: {"error":"Unauthorized"}\n\n`])).toMatchObject({ kinds: ["error"], fields: { message: "Unauthorized" } });
  });

  test("finish_reason abort or error is an abort", () => {
    for (const finish of ["abort", "error"]) {
      const { kinds, fields } = scanAll([openaiChunkLine({ text: "a" }), openaiChunkLine({ text: "", finish })]);
      expect(kinds).toEqual(["tokens", "abort"]);
      expect(fields.finishType).toBe(finish);
      expect(fields.message).toBe(`finish_reason "${finish}"`);
    }
  });

  test("invalid payloads", () => {
    expect(scanAll([`data: {oops\n\n`])).toMatchObject({ kinds: ["invalid"] });
    expect(scanAll([`data: {oops\n\n`]).fields.message).toContain("{oops");
    expect(scanAll([`data: [1,2]\n\n`]).kinds).toEqual(["invalid"]);
    expect(scanAll([`data: {"id":"x"}\n\n`])).toMatchObject({ kinds: ["invalid"], fields: { message: "event has neither choices nor usage" } });
    expect(scanAll([`data: [DONE]x\n\n`]).kinds).toEqual(["invalid"]);
  });

  test("[DONE] with trailing blanks", () => {
    expect(scanOpenaiEvent(encoder.encode("[DONE] \r"), createEventFields())).toBe("done");
  });
});

describe("extractOpenaiText", () => {
  test("the choices[0].text delta, exactly (unicode, escapes)", () => {
    expect(extractOpenaiText(payloadOf(openaiChunkLine({ text: ' 漢字 😀 "q" \\' })))).toBe(' 漢字 😀 "q" \\');
  });

  test("empty for usage chunks, [DONE], errors and non-JSON", () => {
    expect(extractOpenaiText(payloadOf(openaiUsageLine(3)))).toBe("");
    expect(extractOpenaiText(encoder.encode("[DONE]"))).toBe("");
    expect(extractOpenaiText(encoder.encode(`{"error":{"message":"x"}}`))).toBe("");
    expect(extractOpenaiText(encoder.encode("{oops"))).toBe("");
  });
});

// ---- The byte readers against the JSON.parse reading ----

/** Texts that hold every key pattern the readers search for, escaped as a JSON string must hold them. */
const ADVERSARIAL_TEXTS = [
  "",
  " the",
  ' "usage":{"completion_tokens":99,"prompt_tokens_details":{"cached_tokens":77}}',
  ' "finish_reason":"abort", "finish_reason":null',
  ' "choices":[{"text":"x"}], "error":{"message":"boom"}, "logprobs":{"a":1}',
  '"text":"',
  "ends with a backslash \\",
  'quote then backslash \\"',
  '\\\\"\\',
  "}]}",
  "{[",
  "tab\tnew\nline\r\u0000\u001f",
  "漢字 café 😀 \u2028\u2029",
  "x".repeat(300),
  ' "completion_tokens":12, "cached_tokens":34 '.repeat(4),
];

const vllmChunk = (text: string, extra: { finish?: string | null; usage?: unknown; logprobs?: unknown } = {}): string =>
  JSON.stringify({
    id: "cmpl-0123456789abcdef",
    object: "text_completion",
    created: 1785000000,
    model: "Qwen/Qwen3-8B",
    choices: [{ index: 0, text, logprobs: extra.logprobs ?? null, finish_reason: extra.finish ?? null, stop_reason: null }],
    ...(extra.usage === undefined ? {} : { usage: extra.usage }),
  });

const sglangChunk = (text: string, usage: unknown = null, finish: string | null = null): string =>
  JSON.stringify({
    id: "7f3a",
    object: "text_completion",
    created: 1,
    model: "default",
    choices: [{ index: 0, text, logprobs: null, finish_reason: finish, matched_stop: finish === "stop" ? 151645 : null }],
    usage,
  });

const llamaChunk = (text: string, final = false): string =>
  JSON.stringify({
    choices: [{ text, index: 0, logprobs: null, finish_reason: final ? "length" : null }],
    created: 1796020231,
    model: "/models/tiny {q4}.gguf",
    system_fingerprint: "b1-de3ff81",
    object: "text_completion",
    id: "chatcmpl-rfT8",
    ...(final
      ? {
          usage: { completion_tokens: 3, prompt_tokens: 32, total_tokens: 35, prompt_tokens_details: { cached_tokens: 0 } },
          timings: { cache_n: 0, prompt_n: 32, prompt_ms: 6.716, predicted_per_second: 208.0 },
        }
      : {}),
  });

const usage = (completion: number, cached?: number) => ({
  prompt_tokens: 70000,
  total_tokens: 70000 + completion,
  completion_tokens: completion,
  ...(cached === undefined ? {} : { prompt_tokens_details: { cached_tokens: cached } }),
});

/** Token-keyed top_logprobs maps: generated text as keys, which only a structural reading tells from real keys. */
const LOGPROBS = {
  tokens: ["a"],
  token_logprobs: [-0.25],
  top_logprobs: [{ text: -0.5, finish_reason: -1.5, completion_tokens: -2.0, cached_tokens: 0.0, usage: -3.0, error: -4.0, choices: -5.0, logprobs: -6.0 }],
  text_offset: [0],
};

/** The same maps with values that look like the real keys' (null, a string, integers), which only the guard on logprobs catches. */
const LOGPROBS_LOOKALIKE = { top_logprobs: [{ finish_reason: "abort", text: "fake", completion_tokens: 7, cached_tokens: 3 }, { finish_reason: null }] };

/** Payloads the byte readers must read exactly as JSON.parse does. */
const EQUIVALENT: Array<[string, string]> = [
  ...ADVERSARIAL_TEXTS.flatMap(
    (text, k): Array<[string, string]> => [
      [`vLLM, continuous usage, text ${k}`, vllmChunk(text, { usage: usage(k + 1) })],
      [`vLLM, no usage, text ${k}`, vllmChunk(text)],
      [`vLLM, last chunk, text ${k}`, vllmChunk(text, { finish: "length", usage: usage(k + 1, 48) })],
      [`SGLang, usage null, text ${k}`, sglangChunk(text)],
      [`SGLang, continuous usage, text ${k}`, sglangChunk(text, { ...usage(k + 1, 16), reasoning_tokens: 0 }, "stop")],
      [`llama.cpp, text ${k}`, llamaChunk(text)],
      [`llama.cpp final chunk, text ${k}`, llamaChunk(text, true)],
      [`logprobs with token keys, text ${k}`, vllmChunk(text, { logprobs: LOGPROBS, usage: usage(2) })],
      [`logprobs with lookalike values, text ${k}`, vllmChunk(text, { logprobs: LOGPROBS_LOOKALIKE })],
      [
        `logprobs before the text, text ${k}`,
        JSON.stringify({ id: "x", choices: [{ index: 0, logprobs: LOGPROBS_LOOKALIKE, text, finish_reason: null }], usage: usage(3) }),
      ],
    ],
  ),
  ["usage-only chunk (vLLM)", JSON.stringify({ id: "c", object: "text_completion", created: 1, model: "m", choices: [], usage: usage(200, 69984) })],
  ["usage-only chunk without details", JSON.stringify({ id: "c", choices: [], usage: usage(7) })],
  ["usage-only chunk, details null", `{"choices":[],"usage":{"completion_tokens":3,"prompt_tokens_details":null}}`],
  ["usage without completion_tokens", `{"choices":[],"usage":{"prompt_tokens":5}}`],
  ["finish abort", vllmChunk("", { finish: "abort", usage: usage(3) })],
  ["finish error", sglangChunk("x", usage(3), "error")],
  ["escaped finish reason", `{"choices":[{"text":"a","finish_reason":"st\\u006fp"}]}`],
  ["vLLM error event", `{"error":{"message":"Internal server error","type":"InternalServerError","param":null,"code":500}}`],
  ["SGLang error event", `{"error":{"object":"error","message":"overloaded","type":"SERVICE_UNAVAILABLE","param":null,"code":503}}`],
  ["bare error string", `{"error":"Unauthorized"}`],
  ["error beside choices", `{"id":"x","choices":[{"text":"a","finish_reason":null}],"error":{"message":"late"}}`],
  ["error null beside choices", `{"choices":[{"text":"a","finish_reason":null}],"error":null}`],
  ["old flat vLLM error", `{"object":"error","message":"too long","type":"BadRequestError","param":null,"code":400}`],
  ["neither choices nor usage", `{"id":"x"}`],
  ["empty object", `{}`],
  ["Python json.dumps spacing", `{"id": "x", "choices": [{"index": 0, "text": "a \\"usage\\": 1", "finish_reason": null}], "usage": {"completion_tokens": 3}}`],
  ["blanks around the object", ` \t{"choices":[{"text":"a","finish_reason":null}]} \r`],
  ["usage before choices", `{"usage":{"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":2}},"choices":[{"text":"a","finish_reason":null}]}`],
  ["finish_reason before text", `{"choices":[{"finish_reason":"length","logprobs":null,"text":"\\"text\\":\\"x"}],"usage":{"completion_tokens":1}}`],
  ["text not a string", `{"choices":[{"text":null,"finish_reason":null}]}`],
  ["no text key", `{"choices":[{"index":0,"finish_reason":null}],"usage":{"completion_tokens":2}}`],
  ["choices null with usage", `{"choices":null,"usage":{"completion_tokens":2}}`],
  ["choices an object", `{"choices":{"text":"a"},"usage":{"completion_tokens":2}}`],
  ["first choice not an object", `{"choices":[1,{"text":"a","finish_reason":"stop"}]}`],
  ["two choices", `{"choices":[{"text":"a","finish_reason":null},{"text":"b","finish_reason":"stop"}],"usage":{"completion_tokens":2}}`],
  ["completion_tokens 3.0", `{"choices":[{"text":"a","finish_reason":null}],"usage":{"completion_tokens":3.0}}`],
  ["completion_tokens 1e2", `{"choices":[{"text":"a","finish_reason":null}],"usage":{"completion_tokens":1e2}}`],
  ["completion_tokens -1", `{"choices":[],"usage":{"completion_tokens":-1}}`],
  ["completion_tokens a string", `{"choices":[{"text":"a","finish_reason":null}],"usage":{"completion_tokens":"3"}}`],
  ["completion_tokens null", `{"choices":[{"text":"a","finish_reason":null}],"usage":{"completion_tokens":null}}`],
  ["cached_tokens 5.5", `{"choices":[],"usage":{"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":5.5}}}`],
  ["usage a number", `{"choices":[{"text":"a","finish_reason":null}],"usage":3}`],
  ["nested arrays and objects skipped", `{"x":[{"a":[1,{"b":"]}"}]}],"choices":[{"text":"a","finish_reason":null,"token_ids":[1,2,3]}],"timings":{"n":[[]]}}`],
  ["invalid JSON", `{oops`],
  ["an array", `[1,2]`],
  ["truncated", `{"id":"x","choices":[{"index":0,"text":"ab","logprobs":null,"finish_reason":null,"stop_reas`],
  ["truncated in the text", `{"id":"x","choices":[{"index":0,"text":"ab`],
  ["trailing garbage", `{"choices":[{"text":"a","finish_reason":null}]}x`],
  ["mismatched close in a skipped value", `{"x":[1},"choices":[]}`],
  ["bad literal", `{"choices":[{"text":"a","finish_reason":nul}]}`],
  ["[DONE] with garbage", `[DONE]x`],
];

interface Reading {
  kind: string;
  completionTokens: number;
  cachedTokens: number;
  finishType: string | null;
  message: string;
}

function readWith(scan: typeof scanOpenaiEvent, payload: Uint8Array): Reading & { fields: EventFields } {
  const fields = createEventFields();
  fields.completionTokens = 10; // a running count carried in from earlier chunks
  const kind = scan(payload, fields);
  const { completionTokens, cachedTokens, finishType, message } = fields;
  return { kind, completionTokens, cachedTokens, finishType, message, fields };
}

const textOf = (payload: Uint8Array, f: EventFields): string | null => (f.textStart < 0 ? null : decodeEscapedText(payload.subarray(f.textStart, f.textEnd)));

describe("scanOpenaiEvent reads every shape exactly as JSON.parse does", () => {
  for (const [name, json] of EQUIVALENT) {
    test(name, () => {
      const payload = encoder.encode(json);
      const { fields, ...fast } = readWith(scanOpenaiEvent, payload);
      const { fields: _parsed, ...reference } = readWith(scanOpenaiEventByParsing, payload);
      expect(fast).toEqual(reference);
      // The text bounds hold choices[0].text exactly; none when it has none (or the payload is not JSON).
      const text = extractOpenaiText(payload);
      if (fields.textStart >= 0) expect(textOf(payload, fields)).toBe(text);
      else expect(text).toBe("");
      // locateText (used for events whose scanner did not look) finds the same bounds.
      const located = { textStart: -2, textEnd: -2 };
      locateOpenaiText(payload, located);
      expect(located).toEqual({ textStart: fields.textStart, textEnd: fields.textEnd });
    });
  }
});

describe("scanOpenaiEvent: which reader reads what", () => {
  let parseSpy: ReturnType<typeof spyOn> | undefined;
  afterEach(() => parseSpy?.mockRestore());

  test("vLLM's, SGLang's and llama.cpp's chunks take the native-search reader, with no JSON.parse", () => {
    const plain = [
      vllmChunk(ADVERSARIAL_TEXTS[2] as string, { usage: usage(1) }),
      vllmChunk(" x"),
      vllmChunk("", { finish: "length", usage: usage(9, 32) }),
      sglangChunk(ADVERSARIAL_TEXTS[4] as string),
      sglangChunk("y", usage(2, 16), "stop"),
      llamaChunk("z"),
      llamaChunk("", true),
      JSON.stringify({ id: "c", object: "text_completion", created: 1, model: "m", choices: [], usage: usage(200, 69984) }),
    ].map((json) => encoder.encode(json));
    parseSpy = spyOn(JSON, "parse");
    for (const payload of plain) {
      expect(readPlainChunk(payload)).toBe(true);
      expect(scanOpenaiEvent(payload, createEventFields())).not.toBe("invalid");
    }
    expect(parseSpy).toHaveBeenCalledTimes(0);
  });

  test("shapes the search cannot vouch for go to the structural walk, still without JSON.parse", () => {
    const walked = [
      vllmChunk("a", { logprobs: LOGPROBS, usage: usage(2) }), // token-keyed maps
      `{"id": "x", "choices": [{"text": "a", "finish_reason": null}]}`, // not compact
      `{"usage":{"completion_tokens":4},"choices":[{"text":"a","finish_reason":null}]}`, // a container before choices
      `{"choices":[{"text":"a","finish_reason":null}],"error":null}`, // an error key
    ].map((json) => encoder.encode(json));
    parseSpy = spyOn(JSON, "parse");
    const fields = createEventFields();
    expect(walked.map((payload) => readPlainChunk(payload))).toEqual([false, false, false, false]);
    for (const payload of walked) expect(scanOpenaiEvent(payload, fields)).toBe("tokens");
    expect(parseSpy).toHaveBeenCalledTimes(0);
  });

  test("errors, unusual numbers and malformed payloads are parsed", () => {
    parseSpy = spyOn(JSON, "parse");
    const fields = createEventFields();
    expect(scanOpenaiEvent(encoder.encode(`{"error":{"message":"x"}}`), fields)).toBe("error");
    expect(scanOpenaiEvent(encoder.encode(`{"choices":[],"usage":{"completion_tokens":3.0}}`), fields)).toBe("other");
    expect(scanOpenaiEvent(encoder.encode(`{"choices":[{"text":"a"`), fields)).toBe("invalid");
    expect(parseSpy).toHaveBeenCalledTimes(3);
  });
});

describe("scanOpenaiEvent: what the byte readers do not check", () => {
  // The native-search reader reads the keys it needs and not the bytes between them (sglang-events.ts makes the
  // same trade): payloads no server writes, malformed or with repeated keys, read by their first keys.
  const lenient: Array<[string, string, Partial<Reading>]> = [
    [
      "repeated choices key: the first",
      `{"choices":[{"text":"a","finish_reason":"stop"}],"choices":[{"text":"b","finish_reason":null}]}`,
      { kind: "tokens", finishType: "stop" },
    ],
    [
      "repeated usage key: the first",
      `{"choices":[{"text":"a","finish_reason":null}],"usage":{"completion_tokens":2},"usage":{"completion_tokens":5}}`,
      { kind: "tokens", completionTokens: 2 },
    ],
    ["two objects", `{"choices":[]}{"choices":[],"usage":{"completion_tokens":4}}`, { kind: "other", completionTokens: 4 }],
    ["an unclosed array", `{"choices":[{"text":"a","finish_reason":null}}`, { kind: "tokens", completionTokens: 11 }],
  ];
  for (const [name, json, want] of lenient) {
    test(name, () => {
      const payload = encoder.encode(json);
      expect(readPlainChunk(payload)).toBe(true);
      expect(readWith(scanOpenaiEvent, payload)).toMatchObject(want);
    });
  }

  test("the walk reads repeated keys as JSON.parse does (the last)", () => {
    for (const json of [
      `{"choices": [{"text": "a", "finish_reason": "stop"}], "choices": [{"text": "b", "finish_reason": null}]}`,
      `{"choices": [{"text": "a", "text": "b", "finish_reason": null}], "usage": {"completion_tokens": 2}, "usage": {"completion_tokens": 5}}`,
    ]) {
      const payload = encoder.encode(json);
      expect(readPlainChunk(payload)).toBe(false);
      const { fields, ...fast } = readWith(scanOpenaiEvent, payload);
      const { fields: _parsed, ...reference } = readWith(scanOpenaiEventByParsing, payload);
      expect(fast).toEqual(reference);
      expect(textOf(payload, fields)).toBe("b");
    }
  });

  test("an invalid escape inside the text reads as a token; the text then decodes to nothing (never a throw)", () => {
    const payload = encoder.encode(`{"choices":[{"text":"a\\xb","finish_reason":null}],"usage":{"completion_tokens":1}}`);
    const fields = createEventFields();
    expect(scanOpenaiEvent(payload, fields)).toBe("tokens");
    expect(fields.completionTokens).toBe(1);
    expect(textOf(payload, fields)).toBe("");
  });
});

describe("scanOpenaiEvent through the SSE splitter, at every byte split", () => {
  const texts = ADVERSARIAL_TEXTS.slice(1);
  const body =
    texts.map((text, k) => `data: ${vllmChunk(text, { usage: usage(k + 1, 64), finish: k === texts.length - 1 ? "length" : null })}\n\n`).join("") +
    `data: ${JSON.stringify({ id: "c", choices: [], usage: usage(texts.length, 64) })}\n\n` +
    "data: [DONE]\n\n";
  const bytes = encoder.encode(body);

  function run(pieces: Uint8Array[]): { kinds: string[]; counts: number[]; text: string; cached: number[] } {
    const fields = createEventFields();
    const kinds: string[] = [];
    const counts: number[] = [];
    const cached: number[] = [];
    const escaped = new EscapedText(8);
    const splitter = createSseSplitter((payload) => {
      const kind = scanOpenaiEvent(payload, fields);
      kinds.push(kind);
      counts.push(fields.completionTokens);
      cached.push(fields.cachedTokens);
      if (kind === "tokens") escaped.append(payload, fields.textStart, fields.textEnd);
    });
    // Each piece in a buffer of its own, as the network delivers them.
    for (const piece of pieces) splitter.push(piece.slice());
    splitter.finish();
    return { kinds, counts, text: decodeEscapedText(escaped.take()), cached };
  }

  test("the whole body at once reads every chunk and the concatenated text", () => {
    const whole = run([bytes]);
    expect(whole.kinds).toEqual([...texts.map(() => "tokens"), "other", "done"]);
    expect(whole.counts.slice(0, -1)).toEqual([...texts.map((_, k) => k + 1), texts.length]);
    expect(whole.cached.slice(0, -1).every((c) => c === 64)).toBe(true);
    expect(whole.text).toBe(texts.join(""));
  });

  test("two pieces, split at every byte, read the same", () => {
    const whole = run([bytes]);
    for (let at = 1; at < bytes.length; at++) {
      const split = run([bytes.subarray(0, at), bytes.subarray(at)]);
      if (split.text !== whole.text || split.kinds.join() !== whole.kinds.join() || split.counts.join() !== whole.counts.join()) {
        expect({ at, ...split }).toEqual({ at, ...whole });
      }
    }
  });
});
