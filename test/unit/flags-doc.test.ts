/** The committed flag reference is the one the declarations generate (`bun run docs:flags` rewrites it). */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { COMMAND_NAMES } from "../../src/config/flags/index.ts";
import { flagsOf } from "../../src/cli/flags.ts";
import { FLAGS_DOC, renderFlagsDoc } from "../../src/cli/flags-doc.ts";

const committed = readFileSync(join(import.meta.dir, "..", "..", FLAGS_DOC), "utf8");

test(`${FLAGS_DOC} is what the declarations generate (run \`bun run docs:flags\` after changing a flag)`, () => {
  expect(committed).toBe(renderFlagsDoc());
});

test("every command's section lists exactly its flags", () => {
  const sections = committed.split(/^## warmbench /m).slice(1);
  expect(sections.map((s) => s.split("\n")[0])).toEqual([...COMMAND_NAMES]);
  for (const [i, command] of COMMAND_NAMES.entries()) {
    const listed = [...sections[i]!.matchAll(/^\| `(?:--)?([^`]+?)(?:\.\.\.)?` \|/gm)].map((m) => m[1]!.toLowerCase());
    expect(listed).toEqual(flagsOf(command).map((f) => f.name));
  }
});
