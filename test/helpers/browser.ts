/**
 * A real headless Chromium (Debian's `chromium` package; never one downloaded from npm) driven by playwright-core,
 * for tests that open what warmbench writes as a person would. Each launch gets a fresh profile directory.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

/** Flags for a quiet, offline-friendly headless Chromium; root needs --no-sandbox. */
const CHROMIUM_FLAGS = [
  "--headless",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
  "--disable-sync",
  ...(process.getuid?.() === 0 ? ["--no-sandbox"] : []),
];

/** $CHROMIUM, else the Debian package's binary; a clear error when neither is there. */
export function chromiumPath(): string {
  const candidates = [process.env.CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"].filter((p): p is string => !!p);
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error("no Chromium: install Debian's package (apt-get install -y chromium) or set CHROMIUM; npm test installs it as root");
  return found;
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Launches Chromium with a fresh --user-data-dir, the network switched off, at a fixed viewport. */
export async function openBrowser(viewport = { width: 1400, height: 900 }): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), "warmbench-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath(),
    headless: true,
    args: CHROMIUM_FLAGS,
    offline: true,
    viewport,
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
