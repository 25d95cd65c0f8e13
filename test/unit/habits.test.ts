/**
 * Habits of a codebase others carry on (issue 26, item 5): no source file re-exports another (a reader follows an
 * import to the file that holds the idea, not through a facade), and the compiler refuses unused locals and imports.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { COMMAND_NAMES } from "../../src/config/flags/types.ts";
import { Glob } from "bun";
import { ROOT } from "../helpers/run-cli.ts";

/** `export { a } from "./x.ts"`, `export type { A } from ...`, `export * from ...`, over one or several lines. */
const RE_EXPORT = /^export\s+(?:type\s+)?(?:\*(?:\s+as\s+\w+)?|\{[^}]*\})\s+from\s+["'][^"']+["']/m;

/** The names a file imports (after `as`). */
function importedNames(source: string): Set<string> {
  const names = new Set<string>();
  for (const m of source.matchAll(/^import\s+(?:type\s+)?\{([^}]*)\}\s+from/gm)) {
    for (const part of m[1]!.split(",")) {
      const name = part
        .replace(/^\s*type\s+/, "")
        .split(/\s+as\s+/)
        .at(-1)!
        .trim();
      if (name !== "") names.add(name);
    }
  }
  for (const m of source.matchAll(/^import\s+(?:type\s+)?(?:\*\s+as\s+)?(\w+)\s+from/gm)) names.add(m[1]!);
  return names;
}

/** `export ... from`, or `export { a }` of a name the file imported: either way a facade. */
function reExports(source: string): boolean {
  if (RE_EXPORT.test(source)) return true;
  const imported = importedNames(source);
  for (const m of source.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\}\s*;/gm)) {
    for (const part of m[1]!.split(",")) {
      const name = part
        .replace(/^\s*type\s+/, "")
        .split(/\s+as\s+/)[0]!
        .trim();
      if (imported.has(name)) return true;
    }
  }
  return false;
}

describe("habits", () => {
  test("no source file re-exports another", () => {
    const offenders = [...new Glob("src/**/*.ts").scanSync(ROOT)].filter((f) => reExports(readFileSync(join(ROOT, f), "utf8")));
    expect(offenders).toEqual([]);
  });

  test("the check sees every form of a re-export, and not an import or a local export", () => {
    expect(reExports('export { a, type B } from "./x.ts";')).toBe(true);
    expect(reExports('export type { A } from "../y.ts";')).toBe(true);
    expect(reExports('export * from "./z.ts";')).toBe(true);
    expect(reExports('export {\n  a,\n  b,\n} from "./x.ts";')).toBe(true);
    expect(reExports('export type { Histogram } from "hdr-histogram-js";')).toBe(true);
    expect(reExports('import { a } from "./x.ts";\nexport const b = a;')).toBe(false);
    expect(reExports("export { a, b };")).toBe(false);
    expect(reExports('import { a, type B } from "./x.ts";\nexport { a, type B };')).toBe(true);
    expect(reExports('import type { B as C } from "./x.ts";\nexport type { C };')).toBe(true);
    expect(reExports('import { a } from "./x.ts";\nconst b = a;\nexport { b };')).toBe(false);
  });

  test("every document a source comment cites is in the repo, and every numbered section it names is a heading there", () => {
    const missing: string[] = [];
    for (const f of new Glob("src/**/*.ts").scanSync(ROOT)) {
      const source = readFileSync(join(ROOT, f), "utf8");
      for (const m of source.matchAll(/\b(docs\/[\w/.-]+\.md)((?:,? ?§[\w.]+)*)/g)) {
        const doc = join(ROOT, m[1]!);
        if (!existsSync(doc)) {
          missing.push(`${f}: ${m[1]}`);
          continue;
        }
        const text = readFileSync(doc, "utf8");
        for (const section of m[2]!.matchAll(/§(\d[\d.]*\d|\d)/g)) {
          if (!new RegExp(`^#+ ${section[1]!.replaceAll(".", "\\.")}[. ]`, "m").test(text)) missing.push(`${f}: ${m[1]} §${section[1]}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  test("every source, test, bench and docs script is formatted as biome.jsonc says (fix: npx biome format --write .)", () => {
    const run = Bun.spawnSync([join(ROOT, "node_modules/.bin/biome"), "format", "."], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    const said = `${run.stdout.toString()}${run.stderr.toString()}`;
    if (run.exitCode !== 0) throw new Error(`not formatted (run: npx biome format --write .):\n${said.slice(0, 4000)}`);
    expect(said).toMatch(/Checked \d+ files/);
  });

  test("the formatter check sees a file that is not formatted", () => {
    const run = Bun.spawnSync([join(ROOT, "node_modules/.bin/biome"), "format", "--stdin-file-path=src/x.ts"], {
      cwd: ROOT,
      stdin: new TextEncoder().encode("const  a = { b:1 }\n"),
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(run.stdout.toString()).toBe("const a = { b: 1 };\n");
  });

  test("a command's file (src/cli/<command>.ts) is loaded only when its command runs: main imports each lazily, nothing imports one statically", () => {
    const commandFiles = new Set(COMMAND_NAMES.map((c) => join(ROOT, "src/cli", `${c}.ts`)));
    for (const file of commandFiles) expect(existsSync(file)).toBe(true);
    const staticImports: string[] = [];
    for (const rel of new Glob("src/**/*.ts").scanSync(ROOT)) {
      const source = readFileSync(join(ROOT, rel), "utf8");
      for (const m of source.matchAll(/^import\s[^;]*?from\s+"([^"]+)"/gm)) {
        const target = join(ROOT, dirname(rel), m[1]!);
        if (commandFiles.has(target)) staticImports.push(`${rel} imports ${m[1]}`);
      }
    }
    expect(staticImports).toEqual([]);
    const main = readFileSync(join(ROOT, "src/cli/main.ts"), "utf8");
    for (const c of COMMAND_NAMES) expect(main).toContain(`await import("./${c}.ts")`);
  });

  test("the compiler refuses unused locals and imports", () => {
    const config = JSON.parse(readFileSync(join(ROOT, "tsconfig.json"), "utf8"));
    expect(config.compilerOptions.noUnusedLocals).toBe(true);
  });
});
