/** `warmbench report FILES...`. */
import { warmbenchCommand, write } from "./command.ts";

export const reportCommand = warmbenchCommand(
  "report",
  "Re-render the console report of JSONL results files, or write one HTML/Markdown report of many runs",
  async (raw) => (await import("./report-command.ts")).reportCommand(raw, write),
);
