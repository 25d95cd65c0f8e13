/**
 * docs/reference/bad-inputs.md's hand-written tables (its generated one is checked by test/unit/docs/generated.test.ts):
 * every test a row of "Taken, and waited for" or "Signals" names exists in the suite by its exact name, and the
 * signals table lists every row of the first-signal table (test/integration/first-signal.test.ts), so a phase added
 * there is listed here.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..", "..");

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return testFiles(path);
    return name.endsWith(".test.ts") ? [path] : [];
  });
}

const testNames = (file: string): string[] =>
  [...readFileSync(file, "utf8").matchAll(/\btest\(\s*"((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.parse(`"${m[1]}"`) as string);

const doc = readFileSync(join(ROOT, "docs/reference/bad-inputs.md"), "utf8");

/** The names quoted (“...”) in the last cell of each row between `<!-- marker -->` and `<!-- end marker -->`. */
function named(marker: string): string[] {
  const from = doc.indexOf(`<!-- ${marker} -->`);
  const to = doc.indexOf(`<!-- end ${marker} -->`);
  expect(
    [from, to].every((i) => i >= 0),
    marker,
  ).toBe(true);
  const rows = doc
    .slice(from, to)
    .split("\n")
    .filter((l) => l.startsWith("| ") && !l.startsWith("|---"))
    .slice(1);
  expect(rows.length, marker).toBeGreaterThan(0);
  return rows.flatMap((r) =>
    [
      ...r
        .split("|")
        .at(-2)!
        .matchAll(/“([^”]+)”/g),
    ].map((m) => m[1]!),
  );
}

describe("docs/reference/bad-inputs.md's hand-written tables", () => {
  const suite = new Set(testFiles(join(ROOT, "test")).flatMap(testNames));

  test("every test the waited-for and signal rows name exists in the suite", () => {
    const names = [...named("waited-cases"), ...named("signal-cases")];
    expect(names.length).toBeGreaterThanOrEqual(4);
    expect(names.filter((n) => !suite.has(n))).toEqual([]);
  });

  test("the signals table lists every phase of the first-signal table, once", () => {
    const phases = testNames(join(ROOT, "test/integration/first-signal.test.ts"));
    expect(phases.length).toBeGreaterThanOrEqual(15);
    expect([...named("signal-cases")].sort()).toEqual([...phases].sort());
  });
});
