/**
 * `npm test`, the README's test command and all that CI runs after `npm ci`: typechecks, builds the binary (the
 * end-to-end tests run it as a process), provisions what the selected tests need (test/provision: Chromium, a C
 * compiler, the llama.cpp build, the local Slurm, started before and stopped after however the run ends), runs
 * `bun test` with CI=true (a missing engine fails its tests, saying why, instead of skipping them), and ends with
 * the plain `N passed, N failed` line that CI reads (bun's own summary has another form; the typecheck counts as one
 * test). Extra arguments are passed to `bun test` (e.g. a path filter, which also narrows the provisioning).
 */
import { $ } from "bun";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { needsOf, provision } from "./provision/index.ts";

const bun = process.execPath;
const args = process.argv.slice(2);
const paths = args.filter((a) => !a.startsWith("-") && existsSync(a));
const selection = paths.length > 0 ? args : ["test/", ...args];

const typecheck = await $`${bun} x tsc --noEmit -p .`.nothrow();
if (typecheck.exitCode !== 0) console.error("npm test: the typecheck (tsc --noEmit -p .) failed; the tests run all the same");
await $`${bun} build.ts`;

const junit = join(mkdtempSync(join(tmpdir(), "warmbench-junit-")), "junit.xml");
const stopProvisioned = await provision(needsOf(paths.length > 0 ? paths : ["test/"]));
let code = 1;
try {
  const proc = Bun.spawn([bun, "test", ...selection, "--timeout", "60000", "--reporter=junit", `--reporter-outfile=${junit}`], {
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, CI: process.env.CI ?? "true" },
  });
  // A Ctrl-C reaches bun test too (one process group); a SIGTERM sent to this process alone is passed on. Either way
  // the test run ends first, then what was started is stopped.
  const passOn = (signal: NodeJS.Signals) => () => proc.kill(signal);
  process.on("SIGINT", () => {});
  process.on("SIGTERM", passOn("SIGTERM"));
  code = await proc.exited;
} finally {
  await stopProvisioned();
}

let passed = typecheck.exitCode === 0 ? 1 : 0;
let failed = 1 - passed;
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
