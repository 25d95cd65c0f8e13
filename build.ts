/**
 * Builds the single executable: `bun build.ts` -> dist/warmbench for this host, then smoke-runs it.
 * `bun build.ts --all` adds dist/warmbench-linux-x64 and dist/warmbench-linux-arm64 (Bun fetches those
 * runtimes from the npm registry once).
 */
import { $ } from "bun";

const targets: Array<{ target?: string; outfile: string }> = [{ outfile: "dist/warmbench" }];
if (process.argv.includes("--all")) {
  targets.push({ target: "bun-linux-x64", outfile: "dist/warmbench-linux-x64" });
  targets.push({ target: "bun-linux-arm64", outfile: "dist/warmbench-linux-arm64" });
}

for (const { target, outfile } of targets) {
  const t0 = performance.now();
  // A benchmark must not pick up .env or bunfig.toml from whatever directory it is started in.
  const flags = ["--compile", "--bytecode", "--format=esm", "--minify", "--sourcemap=none", "--no-compile-autoload-dotenv", "--no-compile-autoload-bunfig"];
  if (target) flags.push(`--target=${target}`);
  // The prompt worker is its own entry point: the executable embeds it, and `new Worker(new URL(...))` finds it there.
  await $`${process.execPath} build ${flags} src/cli.ts src/workload/prompt-worker.ts --outfile ${outfile}`.quiet();
  console.error(`built ${outfile} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

const version = (await $`./dist/warmbench --version`.text()).trim();
if (!/^\d+\.\d+\.\d+/.test(version)) throw new Error(`smoke run of dist/warmbench printed "${version}"`);
console.error(`dist/warmbench --version: ${version}`);
