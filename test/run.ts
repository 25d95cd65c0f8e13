/**
 * `npm test`: builds the binary (the end-to-end tests run it as a process), runs `bun test`, and ends with the
 * plain `N passed, N failed` line that CI reads (bun's own summary has another form). Extra arguments are
 * passed to `bun test` (e.g. a path filter).
 */
import { $ } from "bun";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const bun = process.execPath;
await $`${bun} build.ts`;

const junit = join(mkdtempSync(join(tmpdir(), "warmbench-junit-")), "junit.xml");
const filters = process.argv.slice(2);
const proc = Bun.spawn([bun, "test", ...(filters.length ? filters : ["test/"]), "--timeout", "60000", "--reporter=junit", `--reporter-outfile=${junit}`], {
  stdio: ["ignore", "inherit", "inherit"],
});
const code = await proc.exited;

let passed = 0;
let failed = 0;
let skipped = 0;
try {
  const xml = readFileSync(junit, "utf8");
  // Count <testcase> elements: one with a <failure>/<error> child failed, with <skipped> was skipped.
  for (const m of xml.matchAll(/<testcase\b[^>]*?(\/>|>([\s\S]*?)<\/testcase>)/g)) {
    const inner = m[2] ?? "";
    if (/<(failure|error)\b/.test(inner)) failed++;
    else if (/<skipped\b/.test(inner)) skipped++;
    else passed++;
  }
} catch {
  failed++;
}
if (code !== 0 && failed === 0) failed = 1; // a crash outside any test still fails the run
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
process.exit(code !== 0 || failed > 0 ? 1 : 0);
