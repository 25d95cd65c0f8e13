/** `warmbench passport`: the server's cache geometry measured from outside, on the console and as JSON. */
import { warmbenchCommand, write } from "./command.ts";

export const passportCommand = warmbenchCommand(
  "passport",
  "Measure the server's cache geometry from outside: page size, capacity, tiers, eviction order, whether answers are cached, llama.cpp slots",
  async (raw) => {
    const { parsePassportOptions } = await import("./passport-options.ts");
    const { log } = await import("../log.ts");
    // Warnings and errors only: the passport itself goes to stdout.
    if (raw.quiet === true && raw.verbose !== true) log.level = 1;
    const { passport } = await import("./passport-run.ts");
    return passport(parsePassportOptions(raw), write);
  },
);
