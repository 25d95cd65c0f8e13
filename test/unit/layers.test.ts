/**
 * The layers of src/ (issue 18, item 3), checked by dependency-cruiser with the rules in .dependency-cruiser.cjs:
 * no import cycle, nothing imports upward, the mock imports only itself, the error type and the logger, every file
 * belongs to a layer, no producer imports another (what they share is src/engine). No violation is known
 * (.dependency-cruiser-known-violations.json stays empty): the producers hand their lines to sinks built in src/output.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ROOT } from "../helpers/run-cli.ts";

const CONFIG = join(ROOT, ".dependency-cruiser.cjs");
const KNOWN = join(ROOT, ".dependency-cruiser-known-violations.json");
const DEPCRUISE = join(ROOT, "node_modules", ".bin", "depcruise");

function depcruise(cwd: string, extra: string[]): { code: number; out: string } {
  const r = Bun.spawnSync([DEPCRUISE, "src", "--config", CONFIG, "--output-type", "err", ...extra], { cwd, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, out: r.stdout.toString() + r.stderr.toString() };
}

describe("the layers of src/", () => {
  test("no cycle and no layer violation beyond the known ones", () => {
    const r = depcruise(ROOT, ["--ignore-known", KNOWN]);
    if (r.code !== 0) console.error(r.out);
    expect(r.code).toBe(0);
  }, 60_000);

  test("no violation is known: the producers import neither renderers, output nor each other", () => {
    expect(JSON.parse(readFileSync(KNOWN, "utf8"))).toEqual([]);
  });

  test("the rules catch a cycle, an upward import, a producer importing another, the mock reaching the client, and a file outside the layers", () => {
    const dir = mkdtempSync(join(tmpdir(), "warmbench-layers-"));
    const files: Record<string, string> = {
      "src/schema/a.ts": 'import { b } from "./b.ts";\nexport const a = () => b;\n',
      "src/schema/b.ts": 'import { a } from "./a.ts";\nexport const b = () => a;\n',
      "src/metrics/m.ts": 'import { s } from "../sweep/s.ts";\nexport const m = s;\n',
      "src/sweep/s.ts": "export const s = 1;\n",
      "src/multiturn/t.ts": 'import { s } from "../sweep/s.ts";\nexport const t = s;\n',
      "src/mock/x.ts": 'import { c } from "../client/c.ts";\nimport { log } from "../log.ts";\nexport const x = [c, log];\n',
      "src/client/c.ts": "export const c = 1;\n",
      "src/log.ts": "export const log = 1;\n",
      "src/stray.ts": 'import { log } from "./log.ts";\nexport const stray = log;\n',
      "tsconfig.json": "{}\n",
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    const r = depcruise(dir, []);
    expect(r.code).not.toBe(0);
    expect(r.out).toContain("no-circular: src/schema/a.ts");
    expect(r.out).toContain("metrics-imports-upward: src/metrics/m.ts → src/sweep/s.ts");
    expect(r.out).toContain("error multiturn-not-into-sweep: src/multiturn/t.ts → src/sweep/s.ts");
    expect(r.out).toContain("mock-apart: src/mock/x.ts → src/client/c.ts");
    expect(r.out).not.toContain("mock-apart: src/mock/x.ts → src/log.ts");
    expect(r.out).toContain("file-outside-layers: src/stray.ts");
  }, 60_000);
});
