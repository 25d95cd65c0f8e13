/** `warmbench run` (the default command): the warm-cache sweep against a server. */
import { parseRunOptions } from "./options.ts";
import { relaunchWithFetchCap } from "./relaunch.ts";
import { runInFlightLimit } from "../sweep/plan.ts";
import type { ParsedFlags } from "./command.ts";
import { sweep } from "./sweep.ts";
import { historyTarget } from "./history-db.ts";

export async function runCommand(raw: ParsedFlags): Promise<number> {
  // Validate before relaunching, so bad flags fail fast and once.
  const opts = parseRunOptions(raw);
  const history = historyTarget(raw);
  const relaunched = await relaunchWithFetchCap(runInFlightLimit(opts));
  if (relaunched !== null) return relaunched;
  return sweep(opts, history);
}
