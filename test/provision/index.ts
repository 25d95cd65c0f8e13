/**
 * Provisioning for the test command: whatever the selected test files need and this machine misses is installed
 * (as root, with Debian's apt: one update, one install), built or started, one line each; without root it prints the
 * command to run instead, and the tests that need it fail saying why (the test command runs them with CI=true).
 */
import { aptCommand, aptInstall, isRoot } from "./apt.ts";
import { NEEDS, type Need } from "./needs.ts";
import { say } from "./say.ts";

/** The needs of the test files `paths` selects (bun test's filters match a file whose path contains one). */
export function needsOf(paths: string[]): Need[] {
  const norm = paths.map((p) => p.replace(/^\.\//, ""));
  return NEEDS.filter((need) => need.files.some((file) => norm.some((p) => file.includes(p))));
}

/** Provisions `needs`; resolves with what stops what it started (call it however the run ends). */
export async function provision(needs: Need[]): Promise<() => Promise<void>> {
  const missing = needs.flatMap((need) => need.missingPackages().map((pkg) => ({ pkg, need })));
  if (missing.length > 0) {
    const packages = [...new Set(missing.map((m) => m.pkg))];
    if (isRoot()) {
      aptInstall(packages);
    } else {
      const forWhat = [...new Set(missing.map((m) => m.need.name))].join(", ");
      say(`missing Debian packages for ${forWhat}: ${packages.join(" ")}; run ${aptCommand(packages)} (the tests that need them fail until then)`);
    }
  }
  const stops: (() => Promise<void>)[] = [];
  for (const need of needs) {
    const stop = await need.ready();
    if (stop) stops.push(stop);
  }
  return async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  };
}
