/**
 * What the suite needs beyond Node.js and npm, each with the test files that need it: Chromium (the HTML report's
 * test), a C compiler (the bench emitter's test), the cached llama.cpp build (the real-engine tests), nginx (the
 * replicas behind a real router), Prometheus (the --serve-metrics test) and the local Slurm (the Slurm tests). Each says which Debian packages it misses, so that one apt-get run installs them all, then
 * makes itself ready (builds, starts) and returns how to undo what it started.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { chromiumPath } from "../helpers/browser.ts";
import { llamaBuild, llamaBuildPresent, LLAMA_BUILD_SCRIPT } from "../helpers/llama-server.ts";
import { nginxPath } from "../helpers/nginx-router.ts";
import { prometheusPath } from "../helpers/prometheus.ts";
import { ROOT } from "../helpers/run-cli.ts";
import { slurmUnavailableReason, START_SLURM } from "../helpers/slurm.ts";
import { aptCommand, isRoot } from "./apt.ts";
import { say } from "./say.ts";

export interface Need {
  name: string;
  /** The test files (from the repository root) that fail without it. */
  files: string[];
  /** Debian packages it still misses ([] when none). */
  missingPackages(): string[];
  /** After the apt step: build or start what is missing; returns what undoes it (stops what it started), if anything. */
  ready(): Promise<(() => Promise<void>) | null>;
}

/**
 * The test files that import `helper` (test/helpers/NAME.ts): what needs a service is the tests that start it, so a
 * new test of a real engine is provisioned for without a list to keep in step.
 */
function testsImporting(helper: string): string[] {
  const dir = join("test", "integration");
  const files = readdirSync(join(ROOT, dir))
    .filter((f) => f.endsWith(".test.ts"))
    .map((f) => join(dir, f));
  return files.filter((f) => readFileSync(join(ROOT, f), "utf8").includes(`helpers/${helper}.ts"`)).sort();
}

const has = (check: () => unknown): boolean => {
  try {
    return Boolean(check());
  } catch {
    return false;
  }
};

/** Runs a provisioning script with its (long) output captured; shown, with a line naming it, only when it fails. */
async function script(args: string[], what: string): Promise<boolean> {
  const proc = Bun.spawn(["bash", ...args], { cwd: ROOT, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code === 0) return true;
  say(`${what} failed (exit ${code}); its output ends:\n${(out + err).trim().split("\n").slice(-40).join("\n")}`);
  return false;
}

const words = (text: string): string[] => text.split(/\s+/).filter((w) => w !== "");
const scriptWords = (args: string[]): string[] => words(Bun.spawnSync(["bash", ...args], { cwd: ROOT, stderr: "ignore" }).stdout.toString());

const chromium: Need = {
  name: "Chromium",
  files: testsImporting("browser"),
  missingPackages: () => [
    ...(has(chromiumPath) ? [] : ["chromium"]),
    ...(existsSync("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf") ? [] : ["fonts-dejavu-core"]),
  ],
  ready: async () => null,
};

const nginx: Need = {
  name: "nginx",
  files: testsImporting("nginx-router"),
  missingPackages: () => (nginxPath() === null ? ["nginx-light"] : []),
  ready: async () => null,
};

const prometheus: Need = {
  name: "Prometheus",
  files: testsImporting("prometheus"),
  missingPackages: () => (prometheusPath() === null ? ["prometheus"] : []),
  ready: async () => null,
};

const compiler: Need = {
  name: "a C compiler",
  files: ["bench/test/emitter.test.ts"],
  missingPackages: () => [...(Bun.which("cc") ? [] : ["gcc"]), ...(existsSync("/usr/include/stdio.h") ? [] : ["libc6-dev"])],
  ready: async () => null,
};

const llamacpp: Need = {
  name: "the llama.cpp build",
  files: testsImporting("llama-server"),
  missingPackages: () => (llamaBuildPresent() ? [] : scriptWords([LLAMA_BUILD_SCRIPT, "--missing-packages"])),
  async ready() {
    if (llamaBuildPresent()) return null;
    const dir = llamaBuild().dir;
    const missing = scriptWords([LLAMA_BUILD_SCRIPT, "--missing-packages"]);
    if (missing.length > 0) {
      say(`the llama.cpp build is missing (${dir}) and so are its build tools: run ${aptCommand(missing)} && bash ${LLAMA_BUILD_SCRIPT}`);
      return null;
    }
    const t0 = performance.now();
    say(`building llama.cpp's llama-server into ${dir} (cached outside the repository, once per machine: ~6 min on 2 cores)`);
    if (await script([LLAMA_BUILD_SCRIPT], "the llama.cpp build")) say(`built llama.cpp in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    return null;
  },
};

const slurm: Need = {
  name: "the local Slurm",
  files: testsImporting("slurm"),
  missingPackages: () => (slurmUnavailableReason() === null ? [] : scriptWords([START_SLURM, "missing-packages"])),
  async ready() {
    const reason = slurmUnavailableReason();
    if (reason === null) return null; // up already (someone else's): left running
    const start = `bash ${join("test", "slurm", "start-slurm.sh")} start`;
    if (!isRoot()) {
      say(`${reason}: slurmd must run as root, so run (as root) ${start}; until then the Slurm tests fail`);
      return null;
    }
    const t0 = performance.now();
    if (!(await script([START_SLURM, "start"], start))) return null;
    say(`started the local Slurm (${start}, ${((performance.now() - t0) / 1000).toFixed(0)} s); stopped when the tests end`);
    return async () => {
      await script([START_SLURM, "stop"], `bash ${join("test", "slurm", "start-slurm.sh")} stop`);
    };
  },
};

export const NEEDS: Need[] = [chromium, compiler, llamacpp, nginx, prometheus, slurm];
