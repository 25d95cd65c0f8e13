/** `warmbench merge FILES... -o OUT`. */
import { warmbenchCommand } from "./command.ts";

export const mergeCommand = warmbenchCommand("merge", "Merge the results of runs that were not coordinated (several clients started by hand)", async (raw) =>
  (await import("./merge-command.ts")).mergeCommand(raw),
);
