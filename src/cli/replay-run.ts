/** `warmbench replay TRACE` against a server (wired through src/engine once the engine sends for every producer). */
import { BenchError } from "../errors.ts";
import type { ParsedFlags } from "./command.ts";
import { parseReplayOptions } from "./replay-options.ts";
import { readTrace } from "../replay/read-trace.ts";

export async function replayRun(raw: ParsedFlags): Promise<number> {
  const opts = parseReplayOptions(raw);
  readTrace(opts.tracePath, opts.trace);
  throw new BenchError("replay: sending is not wired yet (use --analyze)");
}
