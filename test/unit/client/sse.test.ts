import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createSseSplitter } from "../../../src/client/sse.ts";

const FIXTURES = join(import.meta.dir, "../../fixtures/sse");
const fixtureNames = readdirSync(FIXTURES)
  .filter((name) => name.endsWith(".sse"))
  .sort();
const expected = JSON.parse(readFileSync(join(FIXTURES, "expected.json"), "utf8")) as Record<string, unknown[]>;
const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** Independent reference: whole text, split on any line end, keep non-empty data values. */
function referencePayloads(bytes: Uint8Array): string[] {
  return decoder
    .decode(bytes)
    .split(/\r\n|\r|\n/)
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(line.startsWith("data: ") ? 6 : 5))
    .filter((value) => value.length > 0);
}

function collect(chunks: Uint8Array[], finish = true): Uint8Array[] {
  const out: Uint8Array[] = [];
  const splitter = createSseSplitter((payload) => out.push(payload));
  for (const chunk of chunks) splitter.push(chunk);
  if (finish) splitter.finish();
  return out;
}

function sameBytes(a: Uint8Array[], b: Uint8Array[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((payload, k) => Buffer.from(payload).equals(Buffer.from(b[k] as Uint8Array)));
}

/** Offsets at which to split: all of them, or for a big file the ones near line ends plus a stride. */
function splitOffsets(bytes: Uint8Array): number[] {
  if (bytes.length <= 20_000) return Array.from({ length: bytes.length + 1 }, (_, k) => k);
  const offsets = new Set<number>();
  for (let k = 0; k <= bytes.length; k += 4099) offsets.add(k);
  for (let k = 0; k < bytes.length; k++) {
    if (bytes[k] !== 10 && bytes[k] !== 13) continue;
    for (let d = -8; d <= 8; d++) if (k + d >= 0 && k + d <= bytes.length) offsets.add(k + d);
  }
  return [...offsets];
}

describe("createSseSplitter on fixtures", () => {
  test("there are fixtures, each with expectations", () => {
    expect(fixtureNames.length).toBeGreaterThanOrEqual(10);
    for (const name of fixtureNames) expect(expected[name]).toBeDefined();
  });

  for (const name of fixtureNames) {
    const bytes = new Uint8Array(readFileSync(join(FIXTURES, name)));

    test(`${name}: one push yields the reference payloads`, () => {
      const whole = collect([bytes]).map((payload) => decoder.decode(payload));
      expect(whole).toEqual(referencePayloads(bytes));
      expect(whole.length).toBe(expected[name]?.length ?? -1);
    });

    test(`${name}: same payloads at every split point and byte by byte`, () => {
      const whole = collect([bytes]);
      for (const at of splitOffsets(bytes)) {
        const split = collect([bytes.subarray(0, at), bytes.subarray(at)]);
        if (!sameBytes(split, whole)) throw new Error(`${name}: split at ${at} differs`);
      }
      const bytewise: Uint8Array[] = [];
      for (let k = 0; k < bytes.length; k++) bytewise.push(bytes.subarray(k, k + 1));
      expect(sameBytes(collect(bytewise), whole)).toBe(true);
    });
  }
});

describe("createSseSplitter line handling", () => {
  const payloadsOf = (text: string, finish = true) => collect([encoder.encode(text)], finish).map((payload) => decoder.decode(payload));

  test("data with and without a space; only one space is stripped", () => {
    expect(payloadsOf("data: a\ndata:b\ndata:  c\n")).toEqual(["a", "b", " c"]);
  });

  test("comments, other fields, blank and empty data lines are ignored", () => {
    expect(payloadsOf(": hi\nevent: x\nid: 3\nretry: 10\n\ndata:\ndata: \ndatax: y\ndata\nd\n")).toEqual([]);
  });

  test("a final line without terminator is only dispatched by finish()", () => {
    expect(payloadsOf("data: a\n\ndata: [DONE]", false)).toEqual(["a"]);
    expect(payloadsOf("data: a\n\ndata: [DONE]")).toEqual(["a", "[DONE]"]);
    expect(payloadsOf("data: a\r")).toEqual(["a"]);
  });

  test("a CR at the end of a chunk and its LF in the next make one line end", () => {
    const out = collect([encoder.encode("data: a\r"), encoder.encode("\ndata: b\r"), encoder.encode("\r\ndata: c\n")]);
    expect(out.map((payload) => decoder.decode(payload))).toEqual(["a", "b", "c"]);
  });

  test("payload views stay valid after later pushes", () => {
    const first = encoder.encode("data: one\ndata: tw");
    const second = encoder.encode("o\ndata: three\n");
    const out = collect([first, second]);
    expect(out.map((payload) => decoder.decode(payload))).toEqual(["one", "two", "three"]);
    // The one-chunk payload is a view into the caller's chunk, not a copy.
    expect(out[0]?.buffer).toBe(first.buffer);
  });

  test("a multi-megabyte line in small chunks is joined in linear time", () => {
    const line = encoder.encode(`data: ${"x".repeat(4_000_000)}\n`);
    const chunks: Uint8Array[] = [];
    for (let k = 0; k < line.length; k += 64) chunks.push(line.subarray(k, k + 64));
    const started = performance.now();
    const out = collect(chunks);
    // Quadratic re-joining would copy ~125 GB here; linear takes milliseconds.
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(out.length).toBe(1);
    expect(out[0]?.length).toBe(4_000_000);
  });
});
