import { describe, expect, test } from "bun:test";
import { decodeEscapedText, EscapedText } from "../../../src/client/text-bytes.ts";

const encoder = new TextEncoder();
/** The raw content of the JSON string of `text`, as a server writes it. */
const escaped = (text: string): Uint8Array => encoder.encode(JSON.stringify(text).slice(1, -1));

describe("EscapedText", () => {
  test("appends slices, grows past its first size, and hands back an exact-size copy", () => {
    const pieces = ["Hé", ' "q" \\', "漢字", "😀", "\n\t", "x".repeat(500)];
    const text = new EscapedText(1);
    for (const piece of pieces) {
      const bytes = escaped(piece);
      // The piece sits inside a bigger payload, as between the quotes of a chunk.
      const payload = new Uint8Array([123, ...bytes, 125]);
      text.append(payload, 1, 1 + bytes.length);
    }
    const out = text.take();
    expect(out.buffer.byteLength).toBe(out.length);
    expect(decodeEscapedText(out)).toBe(pieces.join(""));
    // take() drops the buffer: the next request-sized use starts empty.
    expect(text.take().length).toBe(0);
  });

  test("empty or reversed ranges append nothing", () => {
    const text = new EscapedText(4);
    text.append(encoder.encode("abc"), 1, 1);
    text.append(encoder.encode("abc"), -1, -1);
    expect(text.take().length).toBe(0);
  });

  test("an escaped surrogate pair split across two chunks joins into one character", () => {
    const text = new EscapedText(4);
    text.append(encoder.encode("\\ud83d"), 0, 6);
    text.append(encoder.encode("\\ude00"), 0, 6);
    expect(decodeEscapedText(text.take())).toBe("😀");
  });
});

describe("decodeEscapedText", () => {
  test("invalid content decodes to no text, never a throw", () => {
    for (const bad of ["a\\x", "\\", 'a"b', "\\u12", "tab\tinside"]) expect(decodeEscapedText(encoder.encode(bad))).toBe("");
    expect(decodeEscapedText(new Uint8Array(0))).toBe("");
  });
});
