/**
 * Debian's apt for the test command's provisioning: one `apt-get update` and one `apt-get install` for everything
 * the selected tests miss, non-interactive, waiting for a lock another job holds instead of failing at once.
 */
import { say } from "./say.ts";

const LOCK = ["-o", "DPkg::Lock::Timeout=300"];
const ENV = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };

export const isRoot = (): boolean => process.getuid?.() === 0;

/** The line a user without root runs instead. */
export const aptCommand = (packages: string[]): string =>
  `sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${packages.join(" ")}`;

/** Installs `packages` (as root); false, with apt's output shown, when it failed. */
export function aptInstall(packages: string[]): boolean {
  const t0 = performance.now();
  for (const args of [
    ["update", "-qq"],
    ["install", "-y", "-qq", "--no-install-recommends", ...packages],
  ]) {
    const r = Bun.spawnSync(["apt-get", ...LOCK, ...args], { env: ENV, stdout: "pipe", stderr: "pipe" });
    if (r.exitCode !== 0) {
      say(`apt-get ${args[0]} failed (exit ${r.exitCode}):\n${(r.stdout.toString() + r.stderr.toString()).trim().slice(-3000)}`);
      return false;
    }
  }
  say(`installed ${packages.join(" ")} (apt-get, ${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  return true;
}
