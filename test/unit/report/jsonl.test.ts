import { afterAll, describe, expect, test } from "bun:test";
import { accessSync, chmodSync, constants, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UsageError } from "../../../src/errors.ts";
import { formatJsonl, parseJsonlLine } from "../../../src/report/jsonl.ts";
import { appendJsonlLine, checkOutputWritable } from "../../../src/output/jsonl-file.ts";

const FIXTURES = join(import.meta.dir, "../../fixtures/metrics");
const tmp = mkdtempSync(join(tmpdir(), "warmbench-jsonl-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("formatJsonl / parseJsonlLine", () => {
  test("Infinity is written bare, as Python's json.dumps, and read back", () => {
    const line = formatJsonl({ backend: "sglang", request_rate: Infinity, low: -Infinity, bad: Number.NaN, n: 1.5 });
    expect(line).toBe('{"backend": "sglang", "request_rate": Infinity, "low": -Infinity, "bad": NaN, "n": 1.5}\n');
    const back = parseJsonlLine(line);
    expect(back.request_rate).toBe(Infinity);
    expect(back.low).toBe(-Infinity);
    expect(back.bad).toBeNaN();
    expect(back.n).toBe(1.5);
  });

  test("tokens inside strings are left alone, and escapes inside strings do not confuse the scanner", () => {
    const obj = {
      msg: 'said "Infinity" and NaN\\',
      "-Infinity": ["NaN", "Infinity", 'x\\"Infinity'],
      nested: { v: Infinity, text: "warmbench:non-finite:Infinity", other: "warmbench:non-finite:!NaN" },
    };
    const line = formatJsonl(obj);
    expect(line.split("\n").length).toBe(2);
    expect(parseJsonlLine(line)).toEqual(obj);
    // The same string hidden behind an escape is still a string.
    expect(parseJsonlLine('[Infinity, "warmbench:non-finite:\\u0049nfinity"]')).toEqual([Infinity, "warmbench:non-finite:Infinity"]);
  });

  test("a line written by the reference script round-trips byte for byte", () => {
    const scriptLine = readFileSync(join(FIXTURES, "script_results.jsonl"), "utf8").split("\n")[0]! + "\n";
    const parsed = parseJsonlLine(scriptLine);
    expect(parsed.request_rate).toBe(Infinity);
    expect(parsed.p99_itl_ms).toBe(12345678.9012);
    expect(formatJsonl(parsed)).toBe(scriptLine);
  });

  test("non-ASCII is escaped like Python's ensure_ascii, newlines stay inside one line", () => {
    const line = formatJsonl({ m: "é\n🙂", a: Float64Array.of(1, 2.5), skip: undefined, z: null, t: true });
    expect(line).toBe('{"m": "\\u00e9\\n\\ud83d\\ude42", "a": [1, 2.5], "z": null, "t": true}\n');
    expect(parseJsonlLine(line).m).toBe("é\n🙂");
  });

  test("invalid JSON still throws", () => {
    expect(() => parseJsonlLine('{"a": Infinityx}')).toThrow();
    expect(() => parseJsonlLine('{"a": 1')).toThrow();
  });
});

describe("appendJsonlLine", () => {
  test("two appends give two parseable lines, after existing content", () => {
    const path = join(tmp, "out.jsonl");
    writeFileSync(path, formatJsonl({ first: 0 }));
    appendJsonlLine(path, formatJsonl({ pct: 10, request_rate: Infinity }));
    appendJsonlLine(path, formatJsonl({ pct: 20, text: "ünïcode" }));
    const lines = readFileSync(path, "utf8").split("\n");
    expect(lines.length).toBe(4);
    expect(lines[3]).toBe("");
    expect(parseJsonlLine(lines[0]!)).toEqual({ first: 0 });
    expect(parseJsonlLine(lines[1]!)).toEqual({ pct: 10, request_rate: Infinity });
    expect(parseJsonlLine(lines[2]!)).toEqual({ pct: 20, text: "ünïcode" });
  });

  test("creates a missing file", () => {
    const path = join(tmp, "new.jsonl");
    appendJsonlLine(path, '{"a": 1}\n');
    expect(readFileSync(path, "utf8")).toBe('{"a": 1}\n');
  });
});

/** A directory this process cannot write: a 0555 dir, or (as root, who bypasses modes) a read-only /proc/sys. */
function findUnwritableDir(): string | null {
  const dir = join(tmp, "readonly");
  mkdirSync(dir);
  chmodSync(dir, 0o555);
  for (const candidate of [dir, "/proc/sys"]) {
    try {
      accessSync(candidate, constants.W_OK);
    } catch {
      return candidate;
    }
  }
  return null;
}
const unwritableDir = findUnwritableDir();

describe("checkOutputWritable", () => {
  test("accepts a new file in an existing directory and an existing writable file", () => {
    expect(() => checkOutputWritable(join(tmp, "fresh.jsonl"), "--output-file")).not.toThrow();
    const existing = join(tmp, "existing.jsonl");
    writeFileSync(existing, "");
    expect(() => checkOutputWritable(existing, "--output-file")).not.toThrow();
  });

  test("a missing directory is a UsageError naming the flag and the directory", () => {
    const missing = join(tmp, "no", "such");
    let error: unknown;
    try {
      checkOutputWritable(join(missing, "out.jsonl"), "--output-file");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toBe(`--output-file: directory ${missing} does not exist`);
    expect((error as UsageError).exitCode).toBe(2);
  });

  test("a file used as a directory counts as a missing directory", () => {
    const file = join(tmp, "plain-file");
    writeFileSync(file, "");
    expect(() => checkOutputWritable(join(file, "out.jsonl"), "--dump-prompts")).toThrow(`--dump-prompts: directory ${file} does not exist`);
  });

  test("a directory given as the output path is rejected", () => {
    expect(() => checkOutputWritable(tmp, "--output-file")).toThrow(UsageError);
  });

  test.skipIf(unwritableDir === null)("an unwritable directory is a UsageError", () => {
    const dir = unwritableDir!;
    expect(() => checkOutputWritable(join(dir, "out.jsonl"), "--output-file")).toThrow(new UsageError(`--output-file: directory ${dir} is not writable`));
  });
});
