/**
 * An output that failed mid-run (write-guard.ts: a full disk under --request-details, say) stops the points still to
 * measure, unless --keep-going: every line measured so far is kept, and the run exits 9 either way.
 */
import type { RunOptions } from "../config/options.ts";
import { log } from "../log.ts";
import { outputFailures } from "../write-guard.ts";

let said = false;

export function outputStops(opts: Pick<RunOptions, "keepGoing">): boolean {
  if (opts.keepGoing === true || outputFailures().length === 0) return false;
  if (!said) log.warn("an output failed: the points still to measure are not (--keep-going measures them anyway)");
  said = true;
  return true;
}
