/** `warmbench compare BASE NEW`. */
import { warmbenchCommand, write } from "./command.ts";

export const compareCommand = warmbenchCommand("compare", "Compare two runs pct by pct, with regression limits (exit 7 when one is exceeded)", async (raw) =>
  (await import("./compare-command.ts")).compareCommand(raw, write),
);
