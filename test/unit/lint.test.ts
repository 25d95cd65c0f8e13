/**
 * The two checks of the code beyond the compiler (issue "The engine runs every point", item 7): Biome's linter with
 * its recommended rules (biome.jsonc says which are off, and why) and knip's unused files, exports and dependencies
 * (knip.json). Each runs over the tree and must find nothing; each is also run on a small fixture holding a
 * violation, to prove it sees one.
 */
import { describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { ROOT } from "../helpers/run-cli.ts";

const BIOME = join(ROOT, "node_modules/.bin/biome");
const KNIP = join(ROOT, "node_modules/.bin/knip");

function run(argv: string[], cwd: string): { code: number; out: string } {
  const r = Bun.spawnSync(argv, { cwd, stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
  return { code: r.exitCode, out: `${r.stdout.toString()}${r.stderr.toString()}` };
}

/** A folder holding `files` (path -> text). */
function fixture(name: string, files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), `warmbench-${name}-`));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** Every diagnostic `biome lint` prints, as `file:line rule` (file relative to `cwd`); the summary says how many files it checked. */
function biomeFindings(cwd: string): { code: number; findings: string[]; out: string } {
  // The github reporter prints nothing when nothing is found: the summary reporter beside it says what was checked.
  const { code, out } = run([BIOME, "lint", "--reporter=github", "--reporter=summary", "--max-diagnostics=none", "."], cwd);
  const findings = [...out.matchAll(/^::\w+ title=([^,]+),file=([^,]+),line=(\d+)/gm)].map((m) => `${relative(cwd, m[2]!)}:${m[3]} ${m[1]}`);
  return { code, findings, out };
}

describe("biome lint", () => {
  test("finds nothing in the tree (rules off, each with its reason: biome.jsonc)", () => {
    const { code, findings, out } = biomeFindings(ROOT);
    expect(findings).toEqual([]);
    expect(out).toMatch(/Checked \d+ files/);
    expect(code).toBe(0);
  });

  test("sees a violation of a recommended rule, and the overrides of biome.jsonc hold", () => {
    const dir = fixture("biome-lint", {
      "src/bad.ts": "export const same = (a: number): boolean => a == 1;\nexport const loose = (a: any): number => a;\n",
      // Off on purpose: `!` after an index (everywhere), `any` and a table's spaced-out regex in the tests.
      "src/fine.ts": "export const first = (xs: number[]): number => xs[0]!;\n",
      "test/fine.test.ts": "export const line = (l: any): boolean => /a  b/.test(l.text);\n",
    });
    copyFileSync(join(ROOT, "biome.jsonc"), join(dir, "biome.jsonc"));
    const { code, findings } = biomeFindings(dir);
    expect(findings.sort()).toEqual(["src/bad.ts:1 lint/suspicious/noDoubleEquals", "src/bad.ts:2 lint/suspicious/noExplicitAny"]);
    expect(code).not.toBe(0);
  });
});

describe("knip", () => {
  test("finds no unused file, export or dependency in the tree (knip.json)", () => {
    const { code, out } = run([KNIP, "--no-progress", "--no-config-hints"], ROOT);
    if (code !== 0) throw new Error(`knip found (remove the dead code, or stop exporting what only its own file uses):\n${out.slice(0, 6000)}`);
    expect(code).toBe(0);
  });

  test("sees an unused file, an unused dependency, an export nobody imports and one only its own file uses", () => {
    const dir = fixture("knip", {
      "package.json": JSON.stringify({
        name: "fixture",
        private: true,
        type: "module",
        scripts: { demo: "bun src/cli.ts" },
        dependencies: { "left-pad": "1.3.0" },
      }),
      "src/cli.ts": 'import { used } from "./lib.ts";\nconsole.log(used());\n',
      "src/lib.ts": "export const used = (): number => helper();\nexport const helper = (): number => 1;\nexport const dead = 2;\n",
      "src/orphan.ts": "export const nobody = 3;\n",
    });
    copyFileSync(join(ROOT, "knip.json"), join(dir, "knip.json"));
    const { code, out } = run([KNIP, "--no-progress", "--no-config-hints", "--reporter", "json"], dir);
    expect(code).not.toBe(0);
    const issues = (JSON.parse(out) as { issues: Array<Record<string, Array<{ name: string }>> & { file: string }> }).issues;
    const found = issues.flatMap((i) =>
      (["files", "dependencies", "exports"] as const).flatMap((kind) => (i[kind] ?? []).map((e) => `${kind} ${i.file} ${e.name}`)),
    );
    expect(found.sort()).toEqual([
      "dependencies package.json left-pad",
      "exports src/lib.ts dead",
      "exports src/lib.ts helper",
      "files src/orphan.ts src/orphan.ts",
    ]);
  });
});
