import { describe, expect, test } from "bun:test";
import {
  indexOfBytes,
  lastIndexOfBytes,
  locateTopLevelString,
  numberEnd,
  plainUint,
  readUint,
  scalarEnd,
  skipValue,
  stringEnd,
  walkArrayFirst,
  walkObject,
} from "../../../src/backends/json-bytes.ts";

const encoder = new TextEncoder();
const bytes = (s: string): Uint8Array => encoder.encode(s);

describe("stringEnd", () => {
  test("the closing quote, whatever the run of backslashes before inner quotes", () => {
    for (const content of ["", "a", 'x\\"y', "\\\\", '\\\\\\"', "a\\\\\\\\", "é😀", "x".repeat(40) + '\\"' + "y".repeat(40), '\\"'.repeat(30)]) {
      const json = `"${content}",1`;
      // The real end agrees with JSON.parse: the content between the quotes is the whole string.
      expect(stringEnd(bytes(json), 0)).toBe(bytes(`"${content}`).length);
      expect(() => JSON.parse(`"${content}"`) as unknown).not.toThrow();
    }
  });

  test("-1 when the string never closes", () => {
    expect(stringEnd(bytes('"abc'), 0)).toBe(-1);
    expect(stringEnd(bytes('"abc\\"'), 0)).toBe(-1);
    expect(stringEnd(bytes(`"${"y".repeat(50)}\\"`), 0)).toBe(-1);
  });
});

describe("scalars", () => {
  test("numberEnd follows JSON's number grammar", () => {
    const cases: Array<[string, number]> = [
      ["0", 1],
      ["-0", 2],
      ["12", 2],
      ["1.5", 3],
      ["1e9", 3],
      ["1E+9", 4],
      ["-2.5e-3", 7],
      ["01", 1],
      ["1.", -1],
      ["-", -1],
      ["e1", -1],
      ["1e", -1],
      [".5", -1],
    ];
    for (const [text, end] of cases) expect({ text, end: numberEnd(bytes(text), 0) }).toEqual({ text, end });
  });

  test("scalarEnd: literals spelled out, numbers", () => {
    expect(scalarEnd(bytes("null,"), 0)).toBe(4);
    expect(scalarEnd(bytes("true}"), 0)).toBe(4);
    expect(scalarEnd(bytes("false]"), 0)).toBe(5);
    expect(scalarEnd(bytes("nul"), 0)).toBe(-1);
    expect(scalarEnd(bytes("fals"), 0)).toBe(-1);
    expect(scalarEnd(bytes("tru e"), 0)).toBe(-1);
    expect(scalarEnd(bytes("42,"), 0)).toBe(2);
    expect(scalarEnd(bytes("x"), 0)).toBe(-1);
  });

  test("plainUint and readUint take plain digits only", () => {
    expect(plainUint(bytes("12345"), 0, 5)).toBe(12345);
    expect(plainUint(bytes("-1"), 0, 2)).toBe(-1);
    expect(plainUint(bytes("1".repeat(16)), 0, 16)).toBe(-1);
    expect(readUint(bytes(" 77}"), 0)).toBe(77);
    expect(readUint(bytes("3.0"), 0)).toBe(-1);
    expect(readUint(bytes("3e2"), 0)).toBe(-1);
    expect(readUint(bytes("null"), 0)).toBe(-1);
  });
});

describe("skipValue", () => {
  test("nested containers with brackets and quotes inside strings", () => {
    const value = `{"a":[1,{"b":"]}\\"{["},[]],"c":{}}`;
    expect(skipValue(bytes(`${value},"next":1`), 0)).toBe(bytes(value).length);
    expect(skipValue(bytes(`[[[]]]x`), 0)).toBe(6);
  });

  test("-1 for mismatched or unclosed containers", () => {
    expect(skipValue(bytes(`[1}`), 0)).toBe(-1);
    expect(skipValue(bytes(`{"a":[1,2}`), 0)).toBe(-1);
    expect(skipValue(bytes(`{"a":"}`), 0)).toBe(-1);
    expect(skipValue(bytes(`[`), 0)).toBe(-1);
  });
});

describe("walkObject and walkArrayFirst", () => {
  const membersOf = (json: string): Array<[string, string]> | null => {
    const b = bytes(json);
    const seen: Array<[string, string]> = [];
    const end = walkObject(b, 0, (_b, keyStart, keyEnd, valueAt) => {
      const valueEnd = skipValue(b, valueAt);
      seen.push([json.slice(keyStart, keyEnd), json.slice(valueAt, valueEnd)]);
      return valueEnd;
    });
    return end === b.length ? seen : null;
  };

  test("every member, blanks anywhere JSON allows them", () => {
    expect(membersOf(`{ "a" : 1 , "b\\"c":"x" ,"d":[ ] }`)).toEqual([
      ["a", "1"],
      ['b\\"c', '"x"'],
      ["d", "[ ]"],
    ]);
    expect(membersOf(`{}`)).toEqual([]);
    expect(membersOf(`{ }`)).toEqual([]);
  });

  test("malformed objects are refused", () => {
    for (const json of [`{"a":1,}`, `{"a" 1}`, `{a:1}`, `{"a":1 "b":2}`, `{"a":1`, `{"a":}`])
      expect({ json, members: membersOf(json) }).toEqual({ json, members: null });
  });

  test("walkArrayFirst reads only the first element", () => {
    const b = bytes(`[{"x":1}, 2, "three"]`);
    const firsts: number[] = [];
    const first = (_b: Uint8Array, at: number): number => {
      firsts.push(at);
      return skipValue(b, at);
    };
    expect(walkArrayFirst(b, 0, first)).toBe(b.length);
    expect(firsts).toEqual([1]);
    expect(walkArrayFirst(bytes("[ ]"), 0, () => -1)).toBe(3);
    expect(walkArrayFirst(bytes("[1 2]"), 0, (bb, at) => skipValue(bb, at))).toBe(-1);
  });
});

describe("native searches", () => {
  const hay = bytes(`{"a":1,"key":2,"key":3}`);
  const key = bytes(`"key":`);

  test("indexOfBytes and lastIndexOfBytes", () => {
    expect(indexOfBytes(hay, key, 0)).toBe(7);
    expect(indexOfBytes(hay, key, 8)).toBe(15);
    expect(indexOfBytes(hay, key, 16)).toBe(-1);
    expect(lastIndexOfBytes(hay, key, hay.length)).toBe(15);
    // The match must end at or before the bound.
    expect(lastIndexOfBytes(hay, key, 20)).toBe(7);
    expect(lastIndexOfBytes(hay, key, 13)).toBe(7);
    expect(lastIndexOfBytes(hay, key, 12)).toBe(-1);
    // A bound before the needle's length never wraps around to the end.
    expect(lastIndexOfBytes(hay, key, 3)).toBe(-1);
    expect(indexOfBytes(hay.subarray(7), key, 0)).toBe(0);
  });
});

describe("locateTopLevelString", () => {
  const locate = (json: string): string | null => {
    const out = { textStart: 0, textEnd: 0 };
    locateTopLevelString(bytes(json), bytes("text"), out);
    return out.textStart < 0 ? null : json.slice(out.textStart, out.textEnd);
  };

  test("the top-level key's string content, the last of repeated keys", () => {
    expect(locate(`{"meta":{"text":"inner"},"text":"a\\"b"}`)).toBe('a\\"b');
    expect(locate(`{"text":"one","text":"two"}`)).toBe("two");
    expect(locate(` { "text" : "" } `)).toBe("");
  });

  test("none when absent, not a string, nested only, or the payload is not an object", () => {
    expect(locate(`{"output_ids":[1]}`)).toBe(null);
    expect(locate(`{"text":5}`)).toBe(null);
    expect(locate(`{"meta":{"text":"inner"}}`)).toBe(null);
    expect(locate(`{"text":"a"`)).toBe(null);
    expect(locate(`{"text":"a"}x`)).toBe(null);
    expect(locate(`[DONE]`)).toBe(null);
  });
});
