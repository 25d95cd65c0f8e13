/**
 * docs/reference/flags.md, generated from the flag declarations: one table per command. `bun run docs:flags`
 * writes it; a test fails when the committed file and the declarations disagree.
 */
import { COMMAND_DESCRIPTIONS, COMMAND_NAMES, type FlagSpec } from "../config/flags/types.ts";
import { defaultText } from "../config/flags/index.ts";
import { writeArtifact } from "../output/results-writer.ts";
import { flagsOf } from "./flags.ts";

export const FLAGS_DOC = "docs/reference/flags.md";

const cell = (text: string): string => text.replaceAll("|", "\\|").replaceAll("\n", " ");
const flagName = (f: FlagSpec): string => (f.type === "positional" ? `\`${f.name.toUpperCase()}${f.variadic ? "..." : ""}\`` : `\`--${f.name}\``);
const kind = (f: FlagSpec): string => (f.choices ? f.choices.join(" \\| ") : f.type === "string" ? "value" : f.type === "boolean" ? "switch" : "file");

export function renderFlagsDoc(): string {
  const out = [
    "# Flags of every command",
    "",
    "Generated from the flag declarations (`src/config/flags/`, the mock's in `src/mock/options.ts`) by `bun run docs:flags`;",
    "do not edit by hand. Any unambiguous prefix of a flag is accepted (`--num-p 8`); an unknown flag exits 2.",
    "",
  ];
  for (const command of COMMAND_NAMES) {
    const description = COMMAND_DESCRIPTIONS[command];
    out.push(`## warmbench ${command}`, "", description, "", "| flag | takes | default | what it does |", "| --- | --- | --- | --- |");
    for (const f of flagsOf(command))
      out.push(`| ${flagName(f)} | ${kind(f)} | ${cell(defaultText(f))} | ${cell(f.help)}${f.repeatable ? " (repeatable)" : ""} |`);
    out.push("");
  }
  return out.join("\n");
}

if (import.meta.main) {
  if (!writeArtifact("docs:flags", FLAGS_DOC, renderFlagsDoc())) process.exit(1);
  console.error(`wrote ${FLAGS_DOC}`);
}
