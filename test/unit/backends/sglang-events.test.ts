import { afterEach, describe, expect, spyOn, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createSglangEventFields, extractText, locateSglangText, scanSglangEvent, type SglangEventKind } from "../../../src/backends/sglang-events.ts";
import { sglangBackend } from "../../../src/backends/sglang.ts";
import { TEXT_NOT_LOCATED } from "../../../src/backends/types.ts";
import { createSseSplitter } from "../../../src/client/sse.ts";
import { decodeEscapedText } from "../../../src/client/text-bytes.ts";

const FIXTURES = join(import.meta.dir, "../../fixtures/sse");
const fixtureNames = readdirSync(FIXTURES)
  .filter((name) => name.endsWith(".sse"))
  .sort();

interface ExpectedEvent {
  kind: SglangEventKind;
  completionTokens?: number;
  cachedTokens?: number;
  finishType?: string | null;
  message?: string;
  text?: string;
  textLength?: number;
}
const expected = JSON.parse(readFileSync(join(FIXTURES, "expected.json"), "utf8")) as Record<string, ExpectedEvent[]>;
const encoder = new TextEncoder();

function payloadsOf(name: string): Uint8Array[] {
  const out: Uint8Array[] = [];
  const splitter = createSseSplitter((payload) => out.push(payload));
  splitter.push(new Uint8Array(readFileSync(join(FIXTURES, name))));
  splitter.finish();
  return out;
}

function scan(json: string) {
  const fields = createSglangEventFields();
  const kind = scanSglangEvent(encoder.encode(json), fields);
  return { kind, ...fields };
}

const meta = (rest: string) => `"meta_info":{"id":"q","finish_reason":null,"prompt_tokens":5,${rest}}`;

describe("scanSglangEvent on fixtures", () => {
  for (const name of fixtureNames) {
    test(name, () => {
      const payloads = payloadsOf(name);
      const wanted = expected[name] ?? [];
      expect(payloads.length).toBe(wanted.length);
      const fields = createSglangEventFields();
      payloads.forEach((payload, k) => {
        const want = wanted[k] as ExpectedEvent;
        const kind = scanSglangEvent(payload, fields);
        expect({ event: k, kind }).toEqual({ event: k, kind: want.kind });
        if (want.kind === "done") return;
        if (want.kind === "error") {
          expect(fields.message).toBe(want.message ?? "");
          return;
        }
        expect(fields.completionTokens).toBe(want.completionTokens ?? -1);
        expect(fields.cachedTokens).toBe(want.cachedTokens ?? -1);
        expect(fields.finishType).toBe(want.finishType ?? null);
        expect(fields.message).toBe(want.message ?? "");
        const text = extractText(payload);
        if (want.textLength !== undefined) expect(text.length).toBe(want.textLength);
        else expect(text).toBe(want.text ?? "");
        // The scanner leaves the text to locateSglangText, whose bounds hold the same text, still escaped.
        expect(fields.textStart).toBe(TEXT_NOT_LOCATED);
        expect(locatedText(payload)).toBe(text);
      });
    });
  }
});

describe("scanSglangEvent fast path", () => {
  let parseSpy: ReturnType<typeof spyOn> | undefined;
  afterEach(() => parseSpy?.mockRestore());

  test("events with finish_reason null are read without JSON.parse", () => {
    const payloads = payloadsOf("long-line.sse");
    const fields = createSglangEventFields();
    parseSpy = spyOn(JSON, "parse");
    expect(scanSglangEvent(payloads[0] as Uint8Array, fields)).toBe("tokens");
    expect(scanSglangEvent(payloads[1] as Uint8Array, fields)).toBe("tokens");
    expect(fields.completionTokens).toBe(8999);
    expect(parseSpy).toHaveBeenCalledTimes(0);
    // The final event has a finish_reason object: parsed once.
    expect(scanSglangEvent(payloads[2] as Uint8Array, fields)).toBe("tokens");
    expect(fields.finishType).toBe("length");
    expect(parseSpy).toHaveBeenCalledTimes(1);
  });
});

/** The text at locateSglangText's bounds, decoded; null when it found none. */
function locatedText(payload: Uint8Array): string | null {
  const range = { textStart: 0, textEnd: 0 };
  locateSglangText(payload, range);
  return range.textStart < 0 ? null : decodeEscapedText(payload.subarray(range.textStart, range.textEnd));
}

describe("locateSglangText", () => {
  test("text first (SGLang's order), with every escape and key pattern inside", () => {
    const text = String.raw`\"text\":\"x\" \\ {\"meta_info\":1} 漢字 \ud83d\ude00 \n`;
    expect(locatedText(encoder.encode(`{"text":"${text}",${meta(`"completion_tokens":2`)}}`))).toBe(JSON.parse(`"${text}"`) as string);
    expect(locatedText(encoder.encode(`{ "text" : "a b", "meta_info": {}}`))).toBe("a b");
  });

  test("another key order is walked; no text key or a non-string text is none", () => {
    expect(locatedText(encoder.encode(`{${meta(`"completion_tokens":2`)},"text":"late \\"text\\":\\"no\\""}`))).toBe('late "text":"no"');
    expect(locatedText(encoder.encode(`{"output_ids":[1,2],${meta(`"completion_tokens":2`)}}`))).toBe(null);
    expect(locatedText(encoder.encode(`{"text":null,"output_ids":[1]}`))).toBe(null);
    expect(locatedText(encoder.encode(`{"error":{"message":"x"}}`))).toBe(null);
    expect(locatedText(encoder.encode(`not json`))).toBe(null);
  });
});

describe("scanSglangEvent edge cases", () => {
  test("[DONE]", () => {
    expect(scan("[DONE]").kind).toBe("done");
    expect(scan("[DONE] ").kind).toBe("done");
    expect(scan("[DONE]x").kind).toBe("invalid");
  });

  test("key names, quotes and backslashes inside text do not fool the byte search", () => {
    const text = String.raw`\"completion_tokens\":5 \"cached_tokens\":9, \"finish_reason\":{\"type\":\"abort\"} \\`;
    const result = scan(`{"text":"${text}","output_ids":[1,2],${meta(`"completion_tokens":2,"cached_tokens":1`)}}`);
    expect(result).toMatchObject({ kind: "tokens", completionTokens: 2, cachedTokens: 1, finishType: null });
    expect(extractText(encoder.encode(`{"text":"${text}"}`))).toBe(JSON.parse(`"${text}"`) as string);
  });

  test("meta_info before text (another key order) still reads the real keys", () => {
    const json = `{${meta(`"completion_tokens":3,"cached_tokens":0`)},"text":"\\"completion_tokens\\":7"}`;
    expect(scan(json)).toMatchObject({ kind: "tokens", completionTokens: 3, cachedTokens: 0 });
  });

  test("missing cached_tokens (SGLang < 0.3.4) is -1", () => {
    expect(scan(`{"text":"a",${meta(`"completion_tokens":1`)}}`)).toMatchObject({ kind: "tokens", cachedTokens: -1 });
  });

  test("whitespace after colons (non-orjson servers)", () => {
    const json = `{"text": "a", "meta_info": {"finish_reason": null, "completion_tokens": 12, "cached_tokens": 3}}`;
    expect(scan(json)).toMatchObject({ kind: "tokens", completionTokens: 12, cachedTokens: 3 });
  });

  test("a count that is not a plain integer is read by the full parse", () => {
    expect(scan(`{"text":"a",${meta(`"completion_tokens":2.0,"cached_tokens":1`)}}`)).toMatchObject({ kind: "tokens", completionTokens: 2 });
    expect(scan(`{"text":"a",${meta(`"completion_tokens":null`)}}`)).toMatchObject({
      kind: "invalid",
      message: "event has no meta_info.completion_tokens",
    });
  });

  test("a finish_reason given as a plain string (older servers) is kept", () => {
    const json = `{"text":"ab","meta_info":{"finish_reason":"stop","completion_tokens":2}}`;
    expect(scan(json)).toMatchObject({ kind: "tokens", finishType: "stop", completionTokens: 2 });
  });

  test("error events: object with message, bare string", () => {
    expect(scan(`{"error":{"message":"too long","code":400}}`)).toMatchObject({ kind: "error", message: "too long" });
    expect(scan(`{"error":"Unauthorized"}`)).toMatchObject({ kind: "error", message: "Unauthorized" });
  });

  test("abort finish with tokens keeps its count and message", () => {
    const json = `{"text":"x","meta_info":{"finish_reason":{"type":"abort","message":"timeout","status_code":503},"completion_tokens":4,"cached_tokens":2}}`;
    expect(scan(json)).toMatchObject({ kind: "abort", message: "timeout", finishType: "abort", completionTokens: 4 });
  });

  test("invalid payloads", () => {
    expect(scan(`{"text":"a","meta_info":{"completion_tokens":1`).kind).toBe("invalid");
    expect(scan(`{}`).kind).toBe("invalid");
    expect(scan(`[1,2]`).kind).toBe("invalid");
    expect(scan(`{"meta_info":{"finish_reason":null}}`).kind).toBe("invalid");
    expect(scan(`not json`)).toMatchObject({ kind: "invalid" });
    expect(scan(`not json`).message).toContain("not json");
  });

  test("extractText of non-JSON or textless events is empty", () => {
    expect(extractText(encoder.encode("[DONE]"))).toBe("");
    expect(extractText(encoder.encode(`{"output_ids":[1]}`))).toBe("");
  });
});

describe("scanSglangEvent as the sglang Backend's scanner", () => {
  test("sglangBackend uses it, and nothing carries over between events (unlike the OpenAI running count)", () => {
    expect(sglangBackend.scanEvent).toBe(scanSglangEvent);
    expect(sglangBackend.extractText).toBe(extractText);
    const fields = createSglangEventFields();
    expect(scanSglangEvent(encoder.encode(`{"text":"a",${meta(`"completion_tokens":3,"cached_tokens":5`)}}`), fields)).toBe("tokens");
    expect(scanSglangEvent(encoder.encode(`{"text":"a",${meta(`"completion_tokens":1`)}}`), fields)).toBe("tokens");
    expect(fields).toEqual({
      completionTokens: 1,
      cachedTokens: -1,
      cachedDeviceTokens: -1,
      cachedHostTokens: -1,
      cachedStorageTokens: -1,
      tiersKnown: false,
      finishType: null,
      slot: -1,
      message: "",
      textStart: TEXT_NOT_LOCATED,
      textEnd: TEXT_NOT_LOCATED,
    });
  });
});
