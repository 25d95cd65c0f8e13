/**
 * tsc on fixtures that must fail or compile (test/fixtures/types/, each with its own tsconfig: the main one leaves the
 * folder out), and their text, for the tests that prove a type catches a mistake.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");
/** The fixtures' folder, as tsc names it in its errors. */
export const TYPE_FIXTURES = "test/fixtures/types";
const TSC = join(ROOT, "node_modules", ".bin", "tsc");

/** A fixture's text. */
export const fixtureText = (file: string): string => readFileSync(join(ROOT, TYPE_FIXTURES, file), "utf8");

/** tsc on each fixture (`tsconfig.NAME.json`), in parallel: its output and exit code. */
export function compileFixtures(names: readonly string[]): Promise<{ out: string; code: number }[]> {
  return Promise.all(
    names.map(async (name) => {
      const p = Bun.spawn([TSC, "--noEmit", "--pretty", "false", "-p", `${TYPE_FIXTURES}/tsconfig.${name}.json`], {
        cwd: ROOT,
        stdout: "pipe",
        stderr: "pipe",
      });
      const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      return { out: out + err, code };
    }),
  );
}

/** The error lines of tsc's output (one per error; their continuation lines left out). */
export const errorLines = (out: string): string[] => out.split("\n").filter((l) => /^\S.*error TS\d+/.test(l));
