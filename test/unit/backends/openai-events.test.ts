import { describe, expect, test } from "bun:test";
import { extractOpenaiText, scanOpenaiEvent } from "../../../src/backends/openai-events.ts";
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
    const { kinds, snapshots } = scanAll([
      openaiChunkLine({ text: "a" }),
      openaiChunkLine({ text: "b", finish: "length", completionTokens: 4 }),
    ]);
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
