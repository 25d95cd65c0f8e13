/**
 * The evidence matrix's table of cases (docs/reference/evidence-matrix.md, between its evidence-cases markers): every
 * cell names the tests that prove it, and each must exist in the suite by its exact name, so a row cannot claim a
 * proof nobody wrote.
 */
import { expect, test } from "bun:test";
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

test("every test the evidence matrix's cases name exists in the suite", () => {
  const names = new Set(
    testFiles(join(ROOT, "test")).flatMap((f) =>
      [...readFileSync(f, "utf8").matchAll(/\btest\(\s*"((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.parse(`"${m[1]}"`) as string),
    ),
  );
  const doc = readFileSync(join(ROOT, "docs/reference/evidence-matrix.md"), "utf8");
  const table = doc.slice(doc.indexOf("<!-- evidence-cases -->"), doc.indexOf("<!-- end evidence-cases -->"));
  const rows = table.split("\n").filter((l) => /^\| [a-z]/.test(l) && !l.startsWith("| case |"));
  expect(rows.length).toBeGreaterThanOrEqual(4);
  for (const case_ of ["failed load", "copied run", "interrupted repeat", "invalid line"]) expect(rows.some((r) => r.startsWith(`| ${case_} |`))).toBe(true);
  const named = rows.flatMap((r) =>
    [
      ...r
        .split("|")
        .at(-2)!
        .matchAll(/“([^”]+)”/g),
    ].map((m) => m[1]!),
  );
  expect(named.length).toBeGreaterThanOrEqual(rows.length);
  expect(named.filter((n) => !names.has(n))).toEqual([]);
});
