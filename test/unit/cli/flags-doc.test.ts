/**
 * The committed flag reference is the one the declarations generate (`bun run docs:flags` rewrites it), and it lists
 * exactly the flags and arguments that each command's `--help` shows: the help is rendered here as `warmbench
 * COMMAND --help` renders it (citty's usage of the same command under the same root), and read back flag by flag.
 */
import { describe, expect, test } from "bun:test";
import { renderUsage } from "citty";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { COMMAND_NAMES, type CommandName } from "../../../src/config/flags/types.ts";
import { flagsOf } from "../../../src/cli/flags.ts";
import { FLAGS_DOC, renderFlagsDoc } from "../../../src/cli/flags-doc.ts";
import { root, SUBCOMMANDS } from "../../../src/cli/main.ts";

const committed = readFileSync(join(import.meta.dir, "..", "..", "..", FLAGS_DOC), "utf8");

/** The flags (`--name`) and arguments (`NAME`) of one command's section of the reference. */
function documented(command: CommandName): string[] {
  const section = committed.split(/^## warmbench /m).find((s) => s.split("\n")[0] === command);
  if (section === undefined) return [];
  return [...section.matchAll(/^\| `([^`]+?)(?:\.\.\.)?` \|/gm)].map((m) => (m[1]!.startsWith("--") ? m[1]! : m[1]!.toUpperCase()));
}

/** The flags (`--name`) and arguments (`NAME`) that `warmbench COMMAND --help` prints (arguments first). */
async function inHelp(command: CommandName): Promise<string[]> {
  const text = stripVTControlCharacters(await renderUsage(SUBCOMMANDS[command], root));
  const found: string[] = [];
  let section = "";
  for (const line of text.split("\n")) {
    if (/^[A-Z]+$/.test(line.trim())) section = line.trim();
    else if (section === "OPTIONS") found.push(...(line.match(/^\s+(--[\w-]+)/)?.slice(1) ?? []));
    else if (section === "ARGUMENTS") found.push(...(line.match(/^\s+([A-Z][A-Z0-9_]*)\s{2,}/)?.slice(1) ?? []));
  }
  return found;
}

test(`${FLAGS_DOC} is what the declarations generate (run \`bun run docs:flags\` after changing a flag)`, () => {
  expect(committed).toBe(renderFlagsDoc());
});

test("every command's section lists exactly its declared flags", () => {
  const sections = committed.split(/^## warmbench /m).slice(1);
  expect(sections.map((s) => s.split("\n")[0])).toEqual([...COMMAND_NAMES]);
  for (const [i, command] of COMMAND_NAMES.entries()) {
    const listed = [...sections[i]!.matchAll(/^\| `(?:--)?([^`]+?)(?:\.\.\.)?` \|/gm)].map((m) => m[1]!.toLowerCase());
    expect(listed).toEqual(flagsOf(command).map((f) => f.name));
  }
});

describe("every flag of each command's --help is in the reference, and every flag of the reference in --help", () => {
  for (const command of COMMAND_NAMES) {
    test(command, async () => {
      const help = await inHelp(command);
      expect({ command, flags: help.toSorted() }).toEqual({ command, flags: documented(command).toSorted() });
    });
  }

  test("the help reader sees flags and arguments (a command with both)", async () => {
    const help = await inHelp("compare");
    expect(help.slice(0, 2)).toEqual(["BASE", "NEW"]);
    expect(help).toContain("--max-regress");
    expect(help).toContain("--allow-missing");
    expect((await inHelp("run")).length).toBeGreaterThan(40);
  });

  test("a flag missing from the reference is caught", async () => {
    const help = await inHelp("merge");
    expect(help).toContain("--output-file");
    expect(
      documented("merge")
        .filter((f) => f !== "--output-file")
        .toSorted(),
    ).not.toEqual(help.toSorted());
  });
});
