/**
 * Every file a command writes goes through src/output (results-writer.ts): nothing in src/cli/ and no producer
 * (src/sweep, src/multiturn, src/capacity, src/replay, src/passport) calls a file-writing function itself. The command
 * line builds the writer or sink and hands it in; a producer hands its lines (--dump-prompts too) to its sink.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Glob } from "bun";
import { ROOT } from "../../helpers/run-cli.ts";

/** The folders (and files) held to it. */
const HELD = [
  "src/cli/**/*.ts",
  "src/cli.ts",
  "src/sweep/**/*.ts",
  "src/multiturn/**/*.ts",
  "src/capacity/**/*.ts",
  "src/replay/**/*.ts",
  "src/passport/**/*.ts",
];

/** node:fs's functions that write, append, sync or cut a file (sync, callback and promise forms). */
const WRITERS = [
  "appendFile",
  "appendFileSync",
  "writeFile",
  "writeFileSync",
  "writeSync",
  "writev",
  "writevSync",
  "fsync",
  "fsyncSync",
  "fdatasync",
  "fdatasyncSync",
  "ftruncate",
  "ftruncateSync",
  "truncate",
  "truncateSync",
  "createWriteStream",
  "copyFile",
  "copyFileSync",
];

const FS_MODULE = /^(?:node:)?fs(?:\/promises)?$/;

/** Each direct write in `source`: a writing function imported from node:fs (under any name), called, or Bun.write. */
function directWrites(source: string): string[] {
  const found: string[] = [];
  for (const m of source.matchAll(/import\s+(?:type\s+)?(?:(\w+)\s*,?\s*)?(?:\{([^}]*)\}|\*\s+as\s+(\w+))?\s*from\s*["']([^"']+)["']/g)) {
    if (!FS_MODULE.test(m[4]!)) continue;
    for (const part of (m[2] ?? "").split(",")) {
      const name = part
        .replace(/^\s*type\s+/, "")
        .split(/\s+as\s+/)[0]!
        .trim();
      if (WRITERS.includes(name)) found.push(`imports ${name} from ${m[4]}`);
    }
    // A default or namespace import of fs: every writing call through it.
    for (const ns of [m[1], m[3]].filter((n): n is string => n !== undefined)) {
      for (const call of source.matchAll(new RegExp(`\\b${ns}\\.(\\w+)\\s*\\(`, "g")))
        if (WRITERS.includes(call[1]!) || call[1] === "write") found.push(`calls ${ns}.${call[1]}`);
    }
  }
  for (const call of source.matchAll(/(?<![\w.])(\w+)\s*\(/g)) if (WRITERS.includes(call[1]!) && call[1]!.endsWith("Sync")) found.push(`calls ${call[1]}`);
  if (/\bBun\.write\s*\(/.test(source)) found.push("calls Bun.write");
  if (/\.writer\s*\(\s*\)/.test(source)) found.push("opens a Bun file writer");
  return found;
}

describe("no direct file writes outside src/output", () => {
  test("no file in src/cli/ or a producer's folder writes a file itself", () => {
    const offenders: string[] = [];
    for (const pattern of HELD)
      for (const file of new Glob(pattern).scanSync(ROOT))
        for (const what of directWrites(readFileSync(join(ROOT, file), "utf8"))) offenders.push(`${file}: ${what}`);
    expect(offenders).toEqual([]);
  });

  test("the check sees each way of writing, and not reads, a sink or the console", () => {
    expect(directWrites('import { appendFileSync } from "node:fs";\nappendFileSync(p, line);')).toEqual([
      "imports appendFileSync from node:fs",
      "calls appendFileSync",
    ]);
    expect(directWrites('import { existsSync, writeFileSync as put } from "node:fs";\nput(p, "x");')).toEqual(["imports writeFileSync from node:fs"]);
    expect(directWrites('import { writeFile } from "node:fs/promises";')).toEqual(["imports writeFile from node:fs/promises"]);
    expect(directWrites('import * as fs from "node:fs";\nfs.writeFileSync(p, "x");\nfs.readFileSync(p);')).toEqual(["calls fs.writeFileSync"]);
    expect(directWrites('import fs from "fs";\nfs.appendFileSync(p, "x");')).toEqual(["calls fs.appendFileSync"]);
    expect(directWrites("await Bun.write(path, data);")).toEqual(["calls Bun.write"]);
    expect(directWrites("const w = Bun.file(path).writer();")).toEqual(["opens a Bun file writer"]);
    expect(directWrites("const fd = x; fsyncSync(fd);")).toEqual(["calls fsyncSync"]);
    // Reading, a sink's method, the console's write and the output layer's writer are no direct write.
    expect(
      directWrites(
        'import { existsSync, readFileSync, statSync } from "node:fs";\n' +
          'import { writeArtifact } from "../output/results-writer.ts";\n' +
          'readFileSync(p);\nsink.prompts(text);\nfiles.line(record);\nwrite(renderConsole(r));\nwriteArtifact("--md", md, text);',
      ),
    ).toEqual([]);
  });
});
