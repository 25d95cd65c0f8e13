/** `warmbench history add|list|show`. */
import { warmbenchCommand, write } from "./command.ts";

export const historyCommand = warmbenchCommand(
  "history",
  "Keep runs in a SQLite history (add FILES, list, show METRIC) for compare history:last-green",
  async (raw) => (await import("./history-command.ts")).historyCommand(raw, write),
);
