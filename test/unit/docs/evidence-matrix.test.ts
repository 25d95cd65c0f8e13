/**
 * The evidence matrix (docs/reference/evidence-matrix.md) is generated from EVIDENCE_POLICY, and every cell that says
 * a verdict fails names a test: that test must exist in the suite, by its exact name, so a cell cannot claim a proof
 * nobody wrote. Every cell is filled (the compiler holds the table to every path x defect).
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { renderBlock } from "../../../docs/generate.ts";
import { DEFECTS, EVIDENCE_POLICY, VERDICT_PATHS } from "../../../src/metrics/evidence-check.ts";

const ROOT = join(import.meta.dir, "..", "..", "..");

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return testFiles(path);
    return name.endsWith(".test.ts") ? [path] : [];
  });
}

const names = new Set(
  testFiles(join(ROOT, "test")).flatMap((f) =>
    [...readFileSync(f, "utf8").matchAll(/\btest\(\s*"((?:[^"\\]|\\.)*)"/g)].map((m) => JSON.parse(`"${m[1]}"`) as string),
  ),
);

describe("the evidence matrix", () => {
  test("every cell is filled: a test that proves the verdict fails, or the reason it does not apply", () => {
    for (const path of VERDICT_PATHS) {
      for (const d of DEFECTS) {
        const cell = EVIDENCE_POLICY[path][d];
        expect([path, d, cell.fails ? cell.test.length > 0 : cell.na.length > 0]).toEqual([path, d, true]);
      }
    }
  });

  test("every test a cell names exists in the suite", () => {
    const named = VERDICT_PATHS.flatMap((p) => DEFECTS.map((d) => EVIDENCE_POLICY[p][d])).flatMap((c) => (c.fails ? [c.test] : []));
    expect(named.length).toBeGreaterThan(15);
    expect(named.filter((n) => !names.has(n))).toEqual([]);
  });

  test("docs/reference/evidence-matrix.md holds the table generated from the code", () => {
    expect(readFileSync(join(ROOT, "docs/reference/evidence-matrix.md"), "utf8")).toContain(renderBlock("evidence-matrix", ROOT));
  });
});
